//! The request text the page and `errata size` send: `key=value` lines.

use alloc::format;
use alloc::string::{String, ToString};

use crate::choice::Choice;
use crate::formats::WeightFormat;
use crate::input::{Gpu, Input};
use crate::kv::KvType;
use crate::model::Model;
use crate::parse::{parse_count, parse_decimal, parse_memory};
use crate::runtime::Runtime;

/// Parses a request: one `key=value` per line (or `&`-separated), with
/// repeated `gpu=<name>|<MiB>` lines for the catalogue.
///
/// Keys: `params`, `layers`, `hidden`, `heads`, `kv_heads`, `head_dim`,
/// `vocab`, `tied`, `weights`, `runtime`, `context`, `parallel`, `kv`,
/// `fa`, `ubatch`, `util`, `batched`, `eager`, `train`, `checkpointing`,
/// `gpus` (how many GPUs share the model), `gpu`, `target` (a GPU name, in any case or as a slug such as
/// `rtx-3090`), `gpu_memory` (a card not in the list: `24GiB`, `24576MiB`).
/// `params` takes counts as people write them (`6.74e9`, `7B`).
/// Optional shapes: `intermediate`, and for mixture-of-experts models
/// `experts`, `experts_used`, `expert_intermediate`, `shared_intermediate`,
/// `dense_layers`; sliding-window attention: `sliding_window`, `sliding_layers`;
/// `attention`: attention weights per layer when not heads × head_dim shaped.
pub fn parse_request(text: &str) -> Result<Input, String> {
    let mut model = Model::dense(0.0, 0, 0, 0, 0);
    let mut input = Input::new(model.clone());
    let mut target: Option<String> = None;
    let mut memory: Option<f64> = None;
    let int = |key: &str, v: &str| {
        v.trim()
            .parse::<u64>()
            .map_err(|_| format!("`{key}` must be a whole number, got `{v}`"))
    };
    let num = |key: &str, v: &str| {
        parse_decimal(v).ok_or_else(|| format!("`{key}` must be a non-negative number, got `{v}`"))
    };
    let flag = |v: &str| matches!(v.trim(), "1" | "true" | "on" | "yes");
    for item in text.split(['\n', '&']) {
        let item = item.trim();
        if item.is_empty() {
            continue;
        }
        let (key, value) = item
            .split_once('=')
            .ok_or_else(|| format!("`{item}` is not key=value"))?;
        match key.trim() {
            "params" => model.params = parse_count(value).map_err(|e| format!("`params`: {e}"))?,
            "layers" => model.layers = int(key, value)?,
            "hidden" => model.hidden = int(key, value)?,
            "heads" => model.heads = int(key, value)?,
            "kv_heads" => model.kv_heads = int(key, value)?,
            "head_dim" => model.head_dim = int(key, value)?,
            "vocab" => model.vocab = int(key, value)?,
            "tied" => model.tied_embeddings = flag(value),
            "intermediate" => model.intermediate = int(key, value)?,
            "experts" => model.experts = int(key, value)?,
            "experts_used" => model.experts_used = int(key, value)?,
            "expert_intermediate" => model.expert_intermediate = int(key, value)?,
            "shared_intermediate" => model.shared_intermediate = int(key, value)?,
            "dense_layers" => model.dense_layers = int(key, value)?,
            "sliding_window" => model.sliding_window = int(key, value)?,
            "sliding_layers" => model.sliding_layers = int(key, value)?,
            "attention" => model.attention = int(key, value)?,
            "weights" => input.weights = WeightFormat::named(value)?,
            "runtime" => input.runtime = Runtime::named(value)?,
            "context" => input.context = int(key, value)?,
            "parallel" => input.parallel = int(key, value)?,
            "gpus" => input.tensor_parallel = int(key, value)?,
            "kv" => input.kv = KvType::named(value)?,
            "fa" => input.flash_attention = flag(value),
            "ubatch" => input.ubatch = int(key, value)?,
            "util" => input.gpu_memory_utilization = num(key, value)?,
            "batched" => input.max_batched_tokens = int(key, value)?,
            "eager" => input.enforce_eager = flag(value),
            "train" => input.train = flag(value),
            "checkpointing" => input.checkpointing = flag(value),
            "gpu" => {
                let (name, mib) = value
                    .rsplit_once('|')
                    .ok_or_else(|| format!("`gpu={value}` must be name|MiB"))?;
                input.gpus.push(Gpu {
                    name: name.trim().to_string(),
                    memory_mib: num("gpu", mib)?,
                });
            }
            "target" => target = Some(value.trim().to_string()),
            "gpu_memory" => {
                let bytes = parse_memory(value).map_err(|e| format!("`gpu_memory`: {e}"))?;
                memory = Some(bytes);
            }
            other => return Err(format!("unknown key `{other}`")),
        }
    }
    input.model = model;
    input.validate()?;
    match (target, memory) {
        (Some(_), Some(_)) => {
            return Err("give `target` (a GPU by name) or `gpu_memory`, not both".to_string());
        }
        (Some(name), None) => input.target_named(&name)?,
        (None, Some(bytes)) => input.target_memory(bytes),
        (None, None) => {}
    }
    Ok(input)
}

/// Writes `model` as request lines (the inverse of [`parse_request`] for
/// the architecture keys): what the page's script sends for a preset.
pub fn model_request(model: &Model) -> String {
    let m = model;
    let mut out = format!(
        "params={}\nlayers={}\nhidden={}\nheads={}\nkv_heads={}\nhead_dim={}\nvocab={}\ntied={}",
        m.params,
        m.layers,
        m.hidden,
        m.heads,
        m.kv_heads,
        m.head_dim,
        m.vocab,
        u8::from(m.tied_embeddings)
    );
    for (key, value) in [
        ("intermediate", m.intermediate),
        ("experts", m.experts),
        ("experts_used", m.experts_used),
        ("expert_intermediate", m.expert_intermediate),
        ("shared_intermediate", m.shared_intermediate),
        ("dense_layers", m.dense_layers),
        ("sliding_window", m.sliding_window),
        ("sliding_layers", m.sliding_layers),
        ("attention", m.attention),
    ] {
        if value > 0 {
            out.push_str(&format!("\n{key}={value}"));
        }
    }
    out
}

/// Writes `input` as a request that [`parse_request`] reads back to the
/// same input: how native code hands a question to the WebAssembly.
pub fn input_request(input: &Input) -> String {
    let mut out = model_request(&input.model);
    out.push_str(&format!(
        "\nweights={}\nruntime={}\ncontext={}\nparallel={}\nkv={}\nfa={}\nubatch={}\nutil={}\nbatched={}\neager={}\ntrain={}\ncheckpointing={}\ngpus={}",
        input.weights.name(),
        input.runtime.name(),
        input.context,
        input.parallel,
        input.kv.name(),
        u8::from(input.flash_attention),
        input.ubatch,
        input.gpu_memory_utilization,
        input.max_batched_tokens,
        u8::from(input.enforce_eager),
        u8::from(input.train),
        u8::from(input.checkpointing),
        input.tensor_parallel
    ));
    for gpu in &input.gpus {
        out.push_str(&format!("\ngpu={}|{}", one_line(&gpu.name), gpu.memory_mib));
    }
    if let Some(gpu) = input.gpu.and_then(|i| input.gpus.get(i)) {
        out.push_str(&format!("\ntarget={}", one_line(&gpu.name)));
    }
    out
}

/// A value as one request line: a line break or `&` would start another key.
fn one_line(value: &str) -> String {
    value.replace(['\n', '\r', '&'], " ")
}
