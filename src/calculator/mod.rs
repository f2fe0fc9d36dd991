//! The sizing calculator's catalogue: `data/models.yaml` and
//! `data/gpus.yaml`, read once into the sizing crate's own types
//! ([`sizing::Model`], [`sizing::Gpu`]). Native code asks questions as a
//! typed [`sizing::Input`]; text exists only in [`Catalogue::page_data`],
//! what the page's script sends to the WebAssembly.

pub mod gguf;
pub mod hf_config;

use std::path::Path;

use serde::Deserialize;
use sizing::{Gpu, Input, Model};

use crate::diagnostics::{Diagnostic, LineIndex};
use crate::front_matter::{self, Split};

/// A model preset as `data/models.yaml` writes it: the numbers from its
/// `config.json`. Only the file format; [`Preset`] is what the code uses.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PresetEntry {
    /// Short id used in front matter and URLs (`llama-3.1-8b`).
    id: String,
    /// Display name.
    name: String,
    /// Where the numbers come from (a Hugging Face repository).
    #[serde(default)]
    source: Option<String>,
    /// Total parameters.
    params: u64,
    /// `num_hidden_layers`.
    layers: u64,
    /// `hidden_size`.
    hidden: u64,
    /// `num_attention_heads`.
    heads: u64,
    /// `num_key_value_heads`.
    kv_heads: u64,
    /// `head_dim`.
    head_dim: u64,
    /// `vocab_size`.
    vocab: u64,
    /// `tie_word_embeddings`.
    #[serde(default)]
    tied_embeddings: bool,
    /// The longest context the model supports.
    #[serde(default)]
    max_context: Option<u64>,
    /// `intermediate_size`: the dense FFN width (worked out from `params` when absent).
    #[serde(default)]
    intermediate: Option<u64>,
    /// Mixture of experts: the experts and how tokens use them.
    #[serde(default)]
    moe: Option<MoeEntry>,
    /// Sliding-window attention.
    #[serde(default)]
    sliding: Option<SlidingEntry>,
}

/// A mixture-of-experts FFN, as in `config.json`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct MoeEntry {
    /// Routed experts per MoE layer (`num_local_experts`, `num_experts`).
    experts: u64,
    /// Experts per token (`num_experts_per_tok`).
    experts_used: u64,
    /// Each expert's width (`moe_intermediate_size`; default `intermediate`).
    #[serde(default)]
    expert_intermediate: Option<u64>,
    /// The shared experts' total width.
    #[serde(default)]
    shared_intermediate: Option<u64>,
    /// Leading dense layers (`first_k_dense_replace`).
    #[serde(default)]
    dense_layers: Option<u64>,
}

/// Sliding-window attention: `layers` of the model attend to the last `window` tokens.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SlidingEntry {
    /// `sliding_window`, in tokens.
    window: u64,
    /// How many layers use it.
    layers: u64,
}

/// A GPU as `data/gpus.yaml` writes it.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct GpuEntry {
    /// Display name.
    name: String,
    /// `nvidia`, `amd`, `apple`: documentation for the reader of the file.
    #[serde(default, rename = "vendor")]
    _vendor: Option<String>,
    /// Total memory as `nvidia-smi` reports it, in MiB.
    memory_mib: u64,
}

/// A model preset: its names and its architecture.
#[derive(Debug, Clone, PartialEq)]
pub struct Preset {
    /// Short id used in front matter and URLs (`llama-3.1-8b`).
    pub id: String,
    /// Display name.
    pub name: String,
    /// Where the numbers come from.
    pub source: Option<String>,
    /// The longest context the model supports.
    pub max_context: Option<u64>,
    /// The architecture.
    pub model: Model,
}

impl From<PresetEntry> for Preset {
    fn from(e: PresetEntry) -> Preset {
        let moe = e.moe.as_ref();
        let sliding = e.sliding.as_ref();
        Preset {
            model: Model {
                params: e.params as f64,
                layers: e.layers,
                hidden: e.hidden,
                heads: e.heads,
                kv_heads: e.kv_heads,
                head_dim: e.head_dim,
                vocab: e.vocab,
                tied_embeddings: e.tied_embeddings,
                intermediate: e.intermediate.unwrap_or(0),
                experts: moe.map_or(0, |m| m.experts),
                experts_used: moe.map_or(0, |m| m.experts_used),
                expert_intermediate: moe.and_then(|m| m.expert_intermediate).unwrap_or(0),
                shared_intermediate: moe.and_then(|m| m.shared_intermediate).unwrap_or(0),
                dense_layers: moe.and_then(|m| m.dense_layers).unwrap_or(0),
                sliding_window: sliding.map_or(0, |s| s.window),
                sliding_layers: sliding.map_or(0, |s| s.layers),
                attention: 0,
            },
            id: e.id,
            name: e.name,
            source: e.source,
            max_context: e.max_context,
        }
    }
}

const MODELS: &str = "data/models.yaml";
const GPUS: &str = "data/gpus.yaml";

/// Both data files.
#[derive(Debug, Clone, Default)]
pub struct Catalogue {
    /// Model presets, in file order.
    pub models: Vec<Preset>,
    /// GPUs, in file order.
    pub gpus: Vec<Gpu>,
}

/// The entries of a data file, and its text (to locate problems in).
fn load_list<T: serde::de::DeserializeOwned>(
    root: &Path,
    rel: &str,
) -> Result<(Vec<T>, String), Diagnostic> {
    let path = root.join(rel);
    let text = std::fs::read_to_string(&path)
        .map_err(|e| Diagnostic::error(rel, 1, 1, format!("cannot read: {e}")))?;
    if text.trim().is_empty() {
        return Err(Diagnostic::error(
            rel,
            1,
            1,
            "the file is empty: expected a list of entries",
        ));
    }
    let split = Split {
        yaml: &text,
        yaml_offset: 0,
        body: "",
        body_offset: text.len(),
    };
    let list = front_matter::parse::<Vec<T>>(&split).map_err(|e| {
        let (line, col) = LineIndex::new(&text).line_col(e.offset);
        let d = Diagnostic::error(rel, line, col, e.message);
        match e.help {
            Some(help) => d.with_help(help),
            None => d,
        }
    })?;
    Ok((list, text))
}

/// A problem in entry `index` of a data file, at its `key`.
type Problem = (usize, &'static str, String);

/// Problems `serde` cannot see in the presets: sizes no model has, a
/// required size of 0, and an id written twice (the second could never
/// be chosen).
fn check_models(models: &[Preset]) -> Vec<Problem> {
    let mut problems: Vec<Problem> = Vec::new();
    for (i, preset) in models.iter().enumerate() {
        let m = &preset.model;
        let zero = [
            ("layers", m.layers),
            ("hidden", m.hidden),
            ("heads", m.heads),
            ("kv_heads", m.kv_heads),
            ("head_dim", m.head_dim),
            ("vocab", m.vocab),
        ]
        .into_iter()
        .find(|(_, v)| *v == 0)
        .map(|(key, _)| (key, format!("`{key}` is 0: every model has at least one")));
        if let Some((key, message)) = m.check_sizes().err().or(zero) {
            problems.push((i, key, format!("model `{}`: {message}", preset.id)));
        }
    }
    for i in repeated(models.iter().map(|m| &m.id)) {
        let id = &models[i].id;
        problems.push((
            i,
            "id",
            format!("model id `{id}` is used twice: the second entry could never be chosen"),
        ));
    }
    problems
}

/// Problems in the GPUs: no memory, a name written twice.
fn check_gpus(gpus: &[GpuEntry]) -> Vec<Problem> {
    let mut problems: Vec<Problem> = Vec::new();
    for (i, gpu) in gpus.iter().enumerate() {
        if gpu.memory_mib == 0 || gpu.memory_mib > 1 << 30 {
            let message = format!(
                "GPU `{}`: `memory_mib` is {}: not a GPU's memory in MiB",
                gpu.name, gpu.memory_mib
            );
            problems.push((i, "memory_mib", message));
        }
    }
    for i in repeated(gpus.iter().map(|g| &g.name)) {
        let name = &gpus[i].name;
        problems.push((
            i,
            "name",
            format!("GPU `{name}` is listed twice: the second entry could never be chosen"),
        ));
    }
    problems
}

/// The entries whose name (in any case) an earlier entry has already.
fn repeated<'a>(names: impl Iterator<Item = &'a String>) -> Vec<usize> {
    let mut seen = std::collections::HashSet::new();
    names
        .enumerate()
        .filter(|(_, name)| !seen.insert(name.to_ascii_lowercase()))
        .map(|(i, _)| i)
        .collect()
}

/// `problems` as diagnostics, each at its entry's key in the data file
/// `rel` whose text is `text` (read for positions only when there are
/// problems).
fn located(rel: &str, text: &str, problems: Vec<Problem>) -> Vec<Diagnostic> {
    if problems.is_empty() {
        return Vec::new();
    }
    let spans = front_matter::Spans::of(text, 0);
    let lines = LineIndex::new(text);
    problems
        .into_iter()
        .map(|(i, key, message)| {
            let at = spans
                .key(&format!("[{i}].{key}"))
                .or_else(|| spans.value(&format!("[{i}]")))
                .unwrap_or(0);
            let (line, col) = lines.line_col(at);
            Diagnostic::error(rel, line, col, message)
        })
        .collect()
}

impl Catalogue {
    /// Reads `data/models.yaml` and `data/gpus.yaml` under `root`. A site
    /// without a `data/` folder has an empty catalogue.
    pub fn load(root: &Path) -> Result<Catalogue, Vec<Diagnostic>> {
        if !root.join("data").is_dir() {
            return Ok(Catalogue::default());
        }
        let models = load_list::<PresetEntry>(root, MODELS);
        let gpus = load_list::<GpuEntry>(root, GPUS);
        match (models, gpus) {
            (Ok((models, models_text)), Ok((gpus, gpus_text))) => {
                let models: Vec<Preset> = models.into_iter().map(Preset::from).collect();
                let mut problems = located(MODELS, &models_text, check_models(&models));
                problems.extend(located(GPUS, &gpus_text, check_gpus(&gpus)));
                if !problems.is_empty() {
                    return Err(problems);
                }
                Ok(Catalogue {
                    models,
                    gpus: gpus
                        .into_iter()
                        .map(|g| Gpu {
                            name: g.name,
                            memory_mib: g.memory_mib as f64,
                        })
                        .collect(),
                })
            }
            (models, gpus) => Err(models.err().into_iter().chain(gpus.err()).collect()),
        }
    }

    /// The preset with this id: in any case or spelling, with "did you mean".
    pub fn model(&self, id: &str) -> Result<&Preset, String> {
        let at = sizing::parse::find_name(self.models.iter().map(|m| m.id.as_str()), id, "model")?;
        Ok(&self.models[at])
    }

    /// A question about `model` with the calculator's defaults, against this catalogue's GPUs.
    pub fn input(&self, model: Model) -> Input {
        Input {
            gpus: self.gpus.clone(),
            ..Input::new(model)
        }
    }

    /// What the page's script needs, as JSON: each preset's architecture as
    /// request text (written by the sizing crate, so the script sends
    /// exactly what native code computes with) and the GPUs.
    pub fn page_data(&self) -> serde_json::Value {
        serde_json::json!({
            "models": self.models.iter().map(|m| serde_json::json!({
                "id": m.id,
                "name": m.name,
                "request": sizing::model_request(&m.model),
            })).collect::<Vec<_>>(),
            "gpus": self.gpus.iter().map(|g| serde_json::json!({
                "name": g.name,
                "memory_mib": g.memory_mib,
            })).collect::<Vec<_>>(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn catalogue() -> Catalogue {
        Catalogue::load(Path::new(env!("CARGO_MANIFEST_DIR"))).unwrap()
    }

    #[test]
    fn data_files_cover_the_required_presets() {
        let c = catalogue();
        for id in [
            "llama-2-7b",
            "llama-2-13b",
            "llama-2-70b",
            "llama-3.1-8b",
            "llama-3.1-70b",
            "llama-3.2-3b",
            "mistral-7b",
            "mixtral-8x7b",
            "qwen2.5-7b",
            "qwen2.5-14b",
            "qwen2.5-32b",
            "qwen2.5-72b",
            "gemma-2-9b",
            "phi-3-mini",
            "llama-3.3-70b",
            "qwen3-0.6b",
            "qwen3-1.7b",
            "qwen3-4b",
            "qwen3-8b",
            "qwen3-14b",
            "qwen3-32b",
            "qwen3-30b-a3b",
            "qwen3-235b-a22b",
            "gemma-3-4b",
            "gemma-3-12b",
            "gemma-3-27b",
            "deepseek-r1-distill-qwen-7b",
            "deepseek-r1-distill-llama-70b",
            "gpt-oss-20b",
            "gpt-oss-120b",
            "mistral-small-3",
            "phi-4",
        ] {
            assert!(c.model(id).is_ok(), "{id}");
        }
        for gpu in [
            "RTX 3060 12GB",
            "RTX 3090",
            "RTX 4090",
            "RTX 5090",
            "L4",
            "A10G",
            "T4",
            "A100 40GB",
            "A100 80GB",
            "H100 80GB",
            "H200",
            "RTX 5080",
            "L40S",
            "H100 NVL",
            "B200",
            "MI300X",
            "Apple M-series 16GB",
            "Apple M-series 128GB",
        ] {
            assert!(c.gpus.iter().any(|g| g.name == gpu), "{gpu}");
        }
        // MoE presets carry their experts; the counts are the published totals.
        let qwen = &c.model("qwen3-30b-a3b").unwrap().model;
        assert_eq!((qwen.experts, qwen.experts_used), (128, 8));
        assert_eq!((qwen.params / 1e8) as u64, 305);
        // head_dim is explicit where it differs from hidden / heads.
        let gemma = &c.model("gemma-2-9b").unwrap().model;
        assert_ne!(gemma.head_dim, gemma.hidden / gemma.heads);
    }

    #[test]
    fn presets_reach_the_page_as_the_request_the_crate_reads() {
        let c = catalogue();
        let data = c.page_data();
        for (preset, shown) in c.models.iter().zip(data["models"].as_array().unwrap()) {
            let request = shown["request"].as_str().unwrap();
            let mut input = sizing::parse_request(&format!("{request}\ncontext=4096")).unwrap();
            assert_eq!(input.model, preset.model, "{}", preset.id);
            // What native code asks reads back the same through the text.
            input.gpus = c.gpus.clone();
            input.target_named("RTX 3090").unwrap();
            let again = sizing::parse_request(&sizing::input_request(&input)).unwrap();
            assert_eq!(again, input, "{}", preset.id);
        }
        assert_eq!(data["gpus"].as_array().unwrap().len(), c.gpus.len());
    }

    #[test]
    fn unknown_presets_get_did_you_mean() {
        let c = catalogue();
        assert_eq!(c.model("Llama-3.1-8B").unwrap().id, "llama-3.1-8b");
        let error = c.model("qwen3-8c").unwrap_err();
        assert!(error.contains("did you mean `qwen3-8b`"), "{error}");
        assert!(
            c.model("gpt-9")
                .unwrap_err()
                .contains("unknown model `gpt-9`")
        );
    }
}
