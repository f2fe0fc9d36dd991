//! One question to the calculator, typed: the model, how it runs, and the
//! GPUs to fit it on. The request parser and `errata` build the same value.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use crate::MIB;
use crate::formats::{ProfileCache, WeightFormat};
use crate::json::gib;
use crate::kv::KvType;
use crate::model::Model;
use crate::parse::find_name;
use crate::runtime::Runtime;

/// The longest context a request may ask about (10M tokens).
pub const MAX_CONTEXT: u64 = 10_000_000;
/// The most GPUs a model may be split across.
pub const MAX_GPUS: u64 = 64;

/// A GPU from the catalogue.
#[derive(Debug, Clone, PartialEq)]
pub struct Gpu {
    /// Display name.
    pub name: String,
    /// Total memory as `nvidia-smi` reports it, in MiB.
    pub memory_mib: f64,
}

/// Everything an estimate depends on.
#[derive(Debug, Clone, PartialEq)]
pub struct Input {
    /// The architecture.
    pub model: Model,
    /// Weight format.
    pub weights: WeightFormat,
    /// Runtime.
    pub runtime: Runtime,
    /// Context length in tokens (`-c`, `num_ctx`, `--max-model-len`, sequence length).
    pub context: u64,
    /// Parallel slots (llama.cpp `--parallel`, `OLLAMA_NUM_PARALLEL`) or batch size (PyTorch).
    pub parallel: u64,
    /// KV-cache element type.
    pub kv: KvType,
    /// Flash attention (llama.cpp `-fa on`; always on in vLLM).
    pub flash_attention: bool,
    /// llama.cpp `-ub` physical batch size.
    pub ubatch: u64,
    /// vLLM `--gpu-memory-utilization`.
    pub gpu_memory_utilization: f64,
    /// vLLM `--max-num-batched-tokens` (the profiled activation peak).
    pub max_batched_tokens: u64,
    /// vLLM `--enforce-eager` (no CUDA graphs).
    pub enforce_eager: bool,
    /// Full fine-tuning with AdamW (PyTorch only).
    pub train: bool,
    /// Activation (gradient) checkpointing when training.
    pub checkpointing: bool,
    /// GPUs the model is split across (vLLM `--tensor-parallel-size`,
    /// llama.cpp's layer split over the visible GPUs).
    pub tensor_parallel: u64,
    /// Weight sums already worked out (shared by copies of this input).
    pub profiles: ProfileCache,
    /// The GPU to fit on (an index into `gpus`), if chosen.
    pub gpu: Option<usize>,
    /// The catalogue.
    pub gpus: Vec<Gpu>,
}

impl Input {
    /// Defaults for everything but the model: FP16 on PyTorch, 4,096 tokens.
    pub fn new(model: Model) -> Input {
        Input {
            model,
            weights: WeightFormat::Fp16,
            runtime: Runtime::PyTorch,
            context: 4096,
            parallel: 1,
            kv: KvType::F16,
            flash_attention: true,
            ubatch: 512,
            gpu_memory_utilization: 0.9,
            max_batched_tokens: 8192,
            enforce_eager: false,
            train: false,
            checkpointing: false,
            tensor_parallel: 1,
            profiles: ProfileCache::default(),
            gpu: None,
            gpus: Vec::new(),
        }
    }
}

impl Input {
    /// Picks the GPU to fit on by name, in any case or as a slug
    /// (`rtx-3090`), with "did you mean" for unknown names.
    pub fn target_named(&mut self, name: &str) -> Result<(), String> {
        let at = find_name(self.gpus.iter().map(|g| g.name.as_str()), name, "GPU")?;
        self.gpu = Some(at);
        Ok(())
    }

    /// Fits on a card that is not in the catalogue, with `bytes` of memory.
    pub fn target_memory(&mut self, bytes: f64) {
        self.gpus.push(Gpu {
            name: format!("{} GiB GPU", gib(bytes)),
            memory_mib: bytes / MIB,
        });
        self.gpu = Some(self.gpus.len() - 1);
    }

    /// Fills in what `config.json` leaves implicit (`head_dim` is
    /// `hidden / heads`, `kv_heads` is `heads`) and refuses what the
    /// calculator cannot answer, naming the request key at fault.
    pub fn validate(&mut self) -> Result<(), String> {
        let model = &mut self.model;
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
                "`params` is required (or `intermediate`, to count them from the shapes)"
                    .to_string(),
            );
        }
        if model.experts > 1 && model.experts_used == 0 {
            return Err("`experts_used` is required with `experts`".to_string());
        }
        model.check_sizes().map_err(|(_, message)| message)?;
        model.sliding_layers = model.sliding_layers.min(model.layers);
        if self.context == 0 || self.context > MAX_CONTEXT {
            return Err(format!(
                "`context` must be between 1 and {MAX_CONTEXT} tokens"
            ));
        }
        if self.tensor_parallel == 0 || self.tensor_parallel > MAX_GPUS {
            return Err(format!("`gpus` must be between 1 and {MAX_GPUS}"));
        }
        if self.parallel == 0 {
            return Err("`parallel` must be at least 1".to_string());
        }
        // As vLLM takes it: a fraction of the GPU, more than none.
        if !(self.gpu_memory_utilization > 0.0 && self.gpu_memory_utilization <= 1.0) {
            return Err(
                "`util` (vLLM's --gpu-memory-utilization) must be more than 0 and at most 1"
                    .to_string(),
            );
        }
        Ok(())
    }
}
