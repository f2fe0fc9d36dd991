//! The sizing calculator's data and requests: `data/models.yaml` and
//! `data/gpus.yaml`, turned into the request text that `sizing::handle`
//! answers, natively here and as WebAssembly in the page.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::diagnostics::{Diagnostic, LineIndex};
use crate::front_matter::{self, Split};

/// A model preset: architecture numbers from its `config.json`.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ModelPreset {
    /// Short id used in front matter and URLs (`llama-3.1-8b`).
    pub id: String,
    /// Display name.
    pub name: String,
    /// Where the numbers come from (a Hugging Face repository).
    #[serde(default)]
    pub source: Option<String>,
    /// Total parameters.
    pub params: u64,
    /// `num_hidden_layers`.
    pub layers: u64,
    /// `hidden_size`.
    pub hidden: u64,
    /// `num_attention_heads`.
    pub heads: u64,
    /// `num_key_value_heads`.
    pub kv_heads: u64,
    /// `head_dim`.
    pub head_dim: u64,
    /// `vocab_size`.
    pub vocab: u64,
    /// `tie_word_embeddings`.
    #[serde(default)]
    pub tied_embeddings: bool,
    /// The longest context the model supports.
    #[serde(default)]
    pub max_context: Option<u64>,
    /// `intermediate_size`: the dense FFN width (worked out from `params` when absent).
    #[serde(default)]
    pub intermediate: Option<u64>,
    /// Mixture of experts: the experts and how tokens use them.
    #[serde(default)]
    pub moe: Option<Moe>,
    /// Sliding-window attention.
    #[serde(default)]
    pub sliding: Option<Sliding>,
}

/// A mixture-of-experts FFN, as in `config.json`.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Moe {
    /// Routed experts per MoE layer (`num_local_experts`, `num_experts`).
    pub experts: u64,
    /// Experts per token (`num_experts_per_tok`).
    pub experts_used: u64,
    /// Each expert's width (`moe_intermediate_size`; default `intermediate`).
    #[serde(default)]
    pub expert_intermediate: Option<u64>,
    /// The shared experts' total width.
    #[serde(default)]
    pub shared_intermediate: Option<u64>,
    /// Leading dense layers (`first_k_dense_replace`).
    #[serde(default)]
    pub dense_layers: Option<u64>,
}

/// Sliding-window attention: `layers` of the model attend to the last `window` tokens.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Sliding {
    /// `sliding_window`, in tokens.
    pub window: u64,
    /// How many layers use it.
    pub layers: u64,
}

impl ModelPreset {
    /// The request lines describing this architecture.
    pub fn request_lines(&self) -> Vec<String> {
        let mut lines = vec![
            format!("params={}", self.params),
            format!("layers={}", self.layers),
            format!("hidden={}", self.hidden),
            format!("heads={}", self.heads),
            format!("kv_heads={}", self.kv_heads),
            format!("head_dim={}", self.head_dim),
            format!("vocab={}", self.vocab),
            format!("tied={}", u8::from(self.tied_embeddings)),
        ];
        let optional = [
            ("intermediate", self.intermediate),
            ("experts", self.moe.as_ref().map(|m| m.experts)),
            ("experts_used", self.moe.as_ref().map(|m| m.experts_used)),
            (
                "expert_intermediate",
                self.moe.as_ref().and_then(|m| m.expert_intermediate),
            ),
            (
                "shared_intermediate",
                self.moe.as_ref().and_then(|m| m.shared_intermediate),
            ),
            (
                "dense_layers",
                self.moe.as_ref().and_then(|m| m.dense_layers),
            ),
            ("sliding_window", self.sliding.as_ref().map(|s| s.window)),
            ("sliding_layers", self.sliding.as_ref().map(|s| s.layers)),
        ];
        for (key, value) in optional {
            if let Some(value) = value {
                lines.push(format!("{key}={value}"));
            }
        }
        lines
    }
}

/// A GPU in the catalogue.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct GpuPreset {
    /// Display name.
    pub name: String,
    /// `nvidia`, `amd`...
    #[serde(default)]
    pub vendor: Option<String>,
    /// Total memory as `nvidia-smi` reports it, in MiB.
    pub memory_mib: u64,
}

/// Both data files.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Catalogue {
    /// Model presets, in file order.
    pub models: Vec<ModelPreset>,
    /// GPUs, in file order.
    pub gpus: Vec<GpuPreset>,
}

/// The architecture of a request: a preset, or numbers given directly.
#[derive(Debug, Clone, PartialEq)]
pub enum Architecture {
    /// A preset id.
    Preset(String),
    /// Custom numbers.
    Custom(Box<ModelPreset>),
}

/// One calculator question, as the command line and the page ask it.
#[derive(Debug, Clone, PartialEq)]
pub struct Query {
    /// The model.
    pub model: Architecture,
    /// Weight format name.
    pub weights: String,
    /// Runtime name.
    pub runtime: String,
    /// Context length.
    pub context: u64,
    /// Parallel slots or batch size.
    pub parallel: u64,
    /// KV-cache type name.
    pub kv: String,
    /// Flash attention.
    pub flash_attention: bool,
    /// vLLM `gpu_memory_utilization`.
    pub gpu_memory_utilization: f64,
    /// Fine-tuning with AdamW.
    pub train: bool,
    /// Activation checkpointing.
    pub checkpointing: bool,
    /// Target GPU name (any case, or a slug such as `rtx-3090`).
    pub gpu: Option<String>,
    /// Target memory for a card not in the catalogue (`24GiB`).
    pub gpu_memory: Option<String>,
    /// GPUs sharing the model (vLLM `--tensor-parallel-size`, llama.cpp's split).
    pub gpus: u64,
}

impl Default for Query {
    fn default() -> Self {
        Query {
            model: Architecture::Preset("llama-3.1-8b".into()),
            weights: "fp16".into(),
            runtime: "pytorch".into(),
            context: 4096,
            parallel: 1,
            kv: "f16".into(),
            flash_attention: true,
            gpu_memory_utilization: 0.9,
            train: false,
            checkpointing: false,
            gpu: Some("RTX 4090".into()),
            gpu_memory: None,
            gpus: 1,
        }
    }
}

fn load_list<T: serde::de::DeserializeOwned>(root: &Path, rel: &str) -> Result<Vec<T>, Diagnostic> {
    let path = root.join(rel);
    let text = std::fs::read_to_string(&path)
        .map_err(|e| Diagnostic::error(rel, 1, 1, format!("cannot read: {e}")))?;
    let split = Split {
        yaml: &text,
        yaml_offset: 0,
        body: "",
        body_offset: text.len(),
    };
    front_matter::parse::<Vec<T>>(&split).map_err(|e| {
        let (line, col) = LineIndex::new(&text).line_col(e.offset);
        let d = Diagnostic::error(rel, line, col, e.message);
        match e.help {
            Some(help) => d.with_help(help),
            None => d,
        }
    })
}

impl Catalogue {
    /// Reads `data/models.yaml` and `data/gpus.yaml` under `root`. A site
    /// without a `data/` folder has an empty catalogue.
    pub fn load(root: &Path) -> Result<Catalogue, Vec<Diagnostic>> {
        if !root.join("data").is_dir() {
            return Ok(Catalogue::default());
        }
        let models = load_list::<ModelPreset>(root, "data/models.yaml");
        let gpus = load_list::<GpuPreset>(root, "data/gpus.yaml");
        match (models, gpus) {
            (Ok(models), Ok(gpus)) => Ok(Catalogue { models, gpus }),
            (models, gpus) => Err(models.err().into_iter().chain(gpus.err()).collect()),
        }
    }

    /// The preset with this id (case-insensitive).
    pub fn model(&self, id: &str) -> Option<&ModelPreset> {
        self.models.iter().find(|m| m.id.eq_ignore_ascii_case(id))
    }

    /// The request text `sizing::handle` answers for `query`.
    pub fn request(&self, query: &Query) -> Result<String, String> {
        let model = match &query.model {
            Architecture::Preset(id) => self.model(id).ok_or_else(|| {
                let known: Vec<&str> = self.models.iter().map(|m| m.id.as_str()).collect();
                format!("unknown model `{id}` (known: {})", known.join(", "))
            })?,
            Architecture::Custom(m) => m.as_ref(),
        };
        let mut lines = model.request_lines();
        lines.extend([
            format!("weights={}", query.weights),
            format!("runtime={}", query.runtime),
            format!("context={}", query.context),
            format!("parallel={}", query.parallel),
            format!("kv={}", query.kv),
            format!("fa={}", u8::from(query.flash_attention)),
            format!("util={}", query.gpu_memory_utilization),
            format!("train={}", u8::from(query.train)),
            format!("checkpointing={}", u8::from(query.checkpointing)),
            format!("gpus={}", query.gpus),
        ]);
        for gpu in &self.gpus {
            lines.push(format!("gpu={}|{}", gpu.name, gpu.memory_mib));
        }
        // The sizing crate matches the name (any case, slugs, "did you
        // mean"), so the command line and the page agree on what they accept.
        if let Some(gpu) = &query.gpu {
            lines.push(format!("target={}", one_line(gpu)));
        }
        if let Some(memory) = &query.gpu_memory {
            lines.push(format!("gpu_memory={}", one_line(memory)));
        }
        Ok(lines.join("\n"))
    }

    /// Answers `query` with the sizing crate: the JSON `errata size --format json` prints.
    pub fn answer(&self, query: &Query) -> Result<serde_json::Value, String> {
        let request = self.request(query)?;
        let answer: serde_json::Value = serde_json::from_str(&sizing::handle(&request))
            .map_err(|e| format!("sizing answer is not JSON: {e}"))?;
        match answer.get("error").and_then(|e| e.as_str()) {
            Some(error) => Err(error.to_string()),
            None => Ok(answer),
        }
    }
}

/// A value as one request line: a line break would start another key.
fn one_line(value: &str) -> String {
    value.replace(['\n', '\r', '&'], " ")
}

/// The weight formats the calculator offers, in the crate's order.
pub fn weight_formats() -> Vec<&'static str> {
    sizing::WEIGHT_FORMATS.iter().map(|f| f.name()).collect()
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
            assert!(c.model(id).is_some(), "{id}");
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
        let qwen = c.model("qwen3-30b-a3b").unwrap();
        assert_eq!(
            qwen.moe.as_ref().map(|m| (m.experts, m.experts_used)),
            Some((128, 8))
        );
        assert_eq!(qwen.params / 100_000_000, 305);
        // head_dim is explicit where it differs from hidden / heads.
        let gemma = c.model("gemma-2-9b").unwrap();
        assert_ne!(gemma.head_dim, gemma.hidden / gemma.heads);
    }

    #[test]
    fn answers_come_from_the_sizing_crate() {
        let c = catalogue();
        let query = Query {
            weights: "bf16".into(),
            ..Query::default()
        };
        let answer = c.answer(&query).unwrap();
        assert_eq!(answer["weights_gib"], serde_json::json!(14.96));
        assert_eq!(answer["target"]["name"], "RTX 4090");
        let bad = Query {
            model: Architecture::Preset("gpt-9".into()),
            ..Query::default()
        };
        assert!(
            c.answer(&bad)
                .unwrap_err()
                .contains("unknown model `gpt-9`")
        );
    }
}
