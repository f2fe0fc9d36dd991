//! The request text the page and `errata size` send: `key=value` lines.

use alloc::format;
use alloc::string::{String, ToString};

use crate::MIB;
use crate::formats::WeightFormat;
use crate::json::gib;
use crate::kv::KvType;
use crate::model::Model;
use crate::parse::{find_name, parse_count, parse_decimal, parse_memory};
use crate::runtime::{Gpu, Input, Runtime};

/// The longest context a request may ask about (10M tokens).
pub const MAX_CONTEXT: u64 = 10_000_000;

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
/// `dense_layers`; sliding-window attention: `sliding_window`, `sliding_layers`.
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
            "weights" => {
                input.weights = WeightFormat::parse(value)
                    .ok_or_else(|| format!("unknown weight format `{value}`"))?
            }
            "runtime" => {
                input.runtime =
                    Runtime::parse(value).ok_or_else(|| format!("unknown runtime `{value}`"))?
            }
            "context" => input.context = int(key, value)?,
            "parallel" => input.parallel = int(key, value)?,
            "gpus" => input.tensor_parallel = int(key, value)?,
            "kv" => {
                input.kv = KvType::parse(value)
                    .ok_or_else(|| format!("unknown KV cache type `{value}`"))?
            }
            "fa" => input.flash_attention = flag(value),
            "ubatch" => input.ubatch = int(key, value)?,
            "util" => input.gpu_memory_utilization = num(key, value)?.min(1.0),
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
    if model.head_dim == 0 && model.heads > 0 {
        model.head_dim = model.hidden / model.heads;
    }
    if model.kv_heads == 0 {
        model.kv_heads = model.heads;
    }
    for (key, value) in [
        ("layers", model.layers),
        ("hidden", model.hidden),
        ("heads", model.heads),
        ("vocab", model.vocab),
    ] {
        if value == 0 {
            return Err(format!("`{key}` is required"));
        }
    }
    if model.params == 0.0 && model.intermediate == 0 {
        return Err(
            "`params` is required (or `intermediate`, to count them from the shapes)".to_string(),
        );
    }
    if model.experts > 1 && model.experts_used == 0 {
        return Err("`experts_used` is required with `experts`".to_string());
    }
    model.sliding_layers = model.sliding_layers.min(model.layers);
    if input.context == 0 || input.context > MAX_CONTEXT {
        return Err(format!(
            "`context` must be between 1 and {MAX_CONTEXT} tokens"
        ));
    }
    if input.tensor_parallel == 0 || input.tensor_parallel > 64 {
        return Err("`gpus` must be between 1 and 64".to_string());
    }
    if input.parallel == 0 {
        return Err("`parallel` must be at least 1".to_string());
    }
    match (target, memory) {
        (Some(_), Some(_)) => {
            return Err("give `target` (a GPU by name) or `gpu_memory`, not both".to_string());
        }
        (Some(name), None) => {
            input.gpu = Some(find_name(
                input.gpus.iter().map(|g| g.name.as_str()),
                &name,
                "GPU",
            )?);
        }
        (None, Some(bytes)) => {
            input.gpus.push(Gpu {
                name: format!("{} GiB GPU", gib(bytes)),
                memory_mib: bytes / MIB,
            });
            input.gpu = Some(input.gpus.len() - 1);
        }
        (None, None) => {}
    }
    input.model = model;
    Ok(input)
}
