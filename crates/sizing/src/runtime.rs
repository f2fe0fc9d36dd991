//! Runtimes and the memory each allocates: weights, KV cache, compute, overhead.

use alloc::string::String;
use alloc::vec::Vec;

use crate::formats::{WeightFormat, weight_bytes};
use crate::kv::{KvType, kv_bytes_per_token};
use crate::model::Model;
use crate::{GIB, MIB};

/// The program that runs the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Runtime {
    /// PyTorch / Hugging Face transformers (inference, or fine-tuning with `train`).
    PyTorch,
    /// vLLM: the KV cache takes what `gpu_memory_utilization` leaves.
    Vllm,
    /// llama.cpp: `-c` is shared by `--parallel` slots.
    LlamaCpp,
    /// Ollama: `num_ctx` per parallel request.
    Ollama,
}

impl Runtime {
    /// The name used on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Runtime::PyTorch => "pytorch",
            Runtime::Vllm => "vllm",
            Runtime::LlamaCpp => "llama.cpp",
            Runtime::Ollama => "ollama",
        }
    }

    /// Parses a name.
    pub fn parse(name: &str) -> Option<Runtime> {
        match name.trim().to_ascii_lowercase().as_str() {
            "pytorch" | "torch" | "transformers" | "hf" => Some(Runtime::PyTorch),
            "vllm" => Some(Runtime::Vllm),
            "llama.cpp" | "llamacpp" | "llama-cpp" | "llama-server" => Some(Runtime::LlamaCpp),
            "ollama" => Some(Runtime::Ollama),
            _ => None,
        }
    }
}

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
            gpu: None,
            gpus: Vec::new(),
        }
    }
}

/// The memory an input needs, in bytes, term by term.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Breakdown {
    /// Weights (plus gradients and optimizer states when training).
    pub weights: f64,
    /// KV cache.
    pub kv_cache: f64,
    /// Compute buffer or activations.
    pub compute: f64,
    /// CUDA context and runtime reserves.
    pub overhead: f64,
    /// Tokens the KV cache holds.
    pub kv_tokens: u64,
}

impl Breakdown {
    /// The sum of all terms.
    pub fn total(&self) -> f64 {
        self.weights + self.kv_cache + self.compute + self.overhead
    }
}

/// The CUDA context and driver reserve on each GPU: what a "24 GB" card
/// loses before PyTorch allocates anything (about 0.4 GiB).
pub const CUDA_CONTEXT: f64 = 0.4 * GIB;
/// vLLM's CUDA graphs, captured unless `--enforce-eager`.
pub const VLLM_CUDA_GRAPHS: f64 = 0.5 * GIB;

pub(crate) fn round_up(value: u64, multiple: u64) -> u64 {
    value.div_ceil(multiple) * multiple
}

/// llama.cpp pads the context to 256 tokens with flash attention, 32 without.
fn llama_cpp_padding(flash_attention: bool) -> u64 {
    if flash_attention { 256 } else { 32 }
}

/// Works out the memory `input` needs. For vLLM, the KV cache is what
/// `gpu_memory_utilization` of the chosen GPU leaves (or exactly the
/// context's worth when no GPU is chosen).
pub fn estimate(input: &Input) -> Breakdown {
    let m = &input.model;
    let hidden = m.hidden as f64;
    let per_token = kv_bytes_per_token(m, input.kv);
    let mut weights = weight_bytes(m, input.weights);
    let mut overhead = CUDA_CONTEXT;
    let parallel = input.parallel.max(1);
    let (kv_tokens, compute) = match input.runtime {
        Runtime::LlamaCpp | Runtime::Ollama => {
            let tokens = if input.runtime == Runtime::Ollama {
                // Ollama allocates num_ctx for each parallel request.
                input.context * parallel
            } else {
                // llama.cpp's -c is the total, shared by --parallel slots.
                input.context
            };
            let tokens = round_up(tokens.max(1), llama_cpp_padding(input.flash_attention));
            let ub = input.ubatch.clamp(1, tokens) as f64;
            // Logits for a micro-batch and a few hidden-state temporaries.
            let mut compute = ub * m.vocab as f64 * 4.0 + ub * hidden * 4.0 * 6.0;
            if !input.flash_attention {
                // The f32 KQ matrix: ubatch × context × heads.
                compute += ub * tokens as f64 * m.heads as f64 * 4.0;
            }
            (tokens, compute)
        }
        Runtime::Vllm => {
            let batched = input
                .max_batched_tokens
                .max(input.context.min(input.max_batched_tokens)) as f64;
            // Profiled peak: hidden states of the batched tokens in bf16
            // through attention and MLP, plus f32 logits for 256 sequences.
            let compute = batched * hidden * 2.0 * 16.0 + 256.0 * m.vocab as f64 * 4.0;
            if !input.enforce_eager {
                overhead += VLLM_CUDA_GRAPHS;
            }
            let tokens = match input.gpu.and_then(|i| input.gpus.get(i)) {
                Some(gpu) => {
                    let budget = input.gpu_memory_utilization * gpu.memory_mib * MIB;
                    let free = budget - weights - compute - overhead;
                    let blocks = if free > 0.0 {
                        (free / (per_token * 16.0)) as u64
                    } else {
                        0
                    };
                    // When not even one full-length sequence fits, show what
                    // that sequence needs rather than an empty cache.
                    (blocks * 16).max(round_up(input.context, 16))
                }
                None => round_up(input.context * parallel, 16),
            };
            (tokens, compute)
        }
        Runtime::PyTorch => {
            let tokens = input.context * parallel;
            let t = tokens as f64;
            let compute = if input.train {
                let per_layer = if input.checkpointing {
                    2.0 * t * hidden
                } else {
                    34.0 * t * hidden
                };
                let one_layer = if input.checkpointing {
                    34.0 * t * hidden
                } else {
                    0.0
                };
                // Logits in f32 for every position, plus their gradient.
                m.layers as f64 * per_layer + one_layer + 2.0 * t * m.vocab as f64 * 4.0
            } else {
                // Hidden states through one layer in 16 bits and the
                // last position's f32 logits per sequence.
                t * hidden * 2.0 * 8.0 + parallel as f64 * m.vocab as f64 * 4.0
            };
            if input.train {
                // bf16 gradients + fp32 master weights + AdamW m and v.
                weights += m.params * (2.0 + 4.0 + 8.0);
            }
            (tokens, compute)
        }
    };
    let kv_cache = if input.runtime == Runtime::PyTorch && input.train {
        0.0
    } else {
        per_token * kv_tokens as f64
    };
    Breakdown {
        weights,
        kv_cache,
        compute,
        overhead,
        kv_tokens,
    }
}
