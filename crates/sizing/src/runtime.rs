//! Runtimes and the memory each allocates: weights, KV cache, compute, overhead.

use crate::input::{Gpu, Input};
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

impl crate::choice::Choice for Runtime {
    const ALL: &'static [Runtime] = &[
        Runtime::PyTorch,
        Runtime::Vllm,
        Runtime::LlamaCpp,
        Runtime::Ollama,
    ];
    const WHAT: &'static str = "runtime";

    fn name(self) -> &'static str {
        match self {
            Runtime::PyTorch => "pytorch",
            Runtime::Vllm => "vllm",
            Runtime::LlamaCpp => "llama.cpp",
            Runtime::Ollama => "ollama",
        }
    }

    fn aliases(self) -> &'static [&'static str] {
        match self {
            Runtime::PyTorch => &["torch", "transformers", "hf"],
            Runtime::LlamaCpp => &["llamacpp", "llama-cpp", "llama-server"],
            _ => &[],
        }
    }
}

/// The memory an input needs on one GPU (the fullest, when there are
/// several), in bytes, term by term, plus what stays in system RAM.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Breakdown {
    /// Weights on the GPU (plus gradients and optimizer states when training).
    pub weights: f64,
    /// KV cache on the GPU.
    pub kv_cache: f64,
    /// Compute buffer or activations.
    pub compute: f64,
    /// CUDA context and runtime reserves.
    pub overhead: f64,
    /// Tokens the KV cache holds.
    pub kv_tokens: u64,
    /// Of the above, what every GPU holds in full (compute buffers, CUDA
    /// context, norms, KV heads replicated when there are fewer than GPUs).
    pub replicated: f64,
    /// System RAM for the weights kept off the GPU (llama.cpp keeps the
    /// token embeddings on the CPU).
    pub host: f64,
    /// The whole model's weights, on every device together.
    pub model: f64,
}

impl Breakdown {
    /// The sum of all terms on one GPU.
    pub fn total(&self) -> f64 {
        self.weights + self.kv_cache + self.compute + self.overhead
    }
}

/// The CUDA context and driver reserve on each GPU: what a "24 GB" card
/// loses before PyTorch allocates anything (about 0.4 GiB).
pub const CUDA_CONTEXT: f64 = 0.4 * GIB;
/// vLLM's CUDA graphs, captured unless `--enforce-eager`.
pub const VLLM_CUDA_GRAPHS: f64 = 0.5 * GIB;
/// vLLM's non-torch allocations measured during profiling (cuBLAS
/// workspaces, NCCL buffers allocated lazily).
pub const VLLM_NON_TORCH: f64 = 0.2 * GIB;
/// vLLM's default `max_num_seqs`: the profile run samples this many sequences.
const VLLM_MAX_NUM_SEQS: f64 = 256.0;

pub(crate) fn round_up(value: u64, multiple: u64) -> u64 {
    value.div_ceil(multiple).saturating_mul(multiple)
}

/// llama.cpp pads the context to 256 tokens with flash attention, 32 without.
fn llama_cpp_padding(flash_attention: bool) -> u64 {
    if flash_attention { 256 } else { 32 }
}

/// How the weights divide across `n` GPUs: (per-GPU weights, replicated
/// part, system RAM). vLLM shards every linear layer, the embeddings and
/// the head (tensor parallelism) and replicates norms and routers;
/// llama.cpp, Ollama and PyTorch (`device_map="auto"`) give each GPU whole
/// layers, with the head on one of them. llama.cpp keeps the token
/// embeddings in system RAM.
fn split_weights(input: &Input, n: u64) -> (f64, f64, f64) {
    let m = &input.model;
    let p = input.profiles.get(m, input.weights);
    let nf = n as f64;
    match input.runtime {
        Runtime::Vllm => (
            (p.total - p.replicated) / nf + p.replicated,
            p.replicated,
            0.0,
        ),
        _ => {
            let on_cpu = if matches!(input.runtime, Runtime::LlamaCpp | Runtime::Ollama) {
                p.embeddings
            } else {
                0.0
            };
            // The fullest GPU: ceil(layers / n) of the largest layers, plus the head.
            let per = (m.layers.div_ceil(n)) as f64;
            let largest = p.layers.iter().copied().fold(0.0, f64::max);
            let first = if n == 1 {
                p.layers.iter().sum::<f64>()
            } else {
                per * largest
            };
            (first + p.head + (p.embeddings - on_cpu), 0.0, on_cpu)
        }
    }
}

/// KV heads on each GPU under tensor parallelism: vLLM shards them, and
/// replicates them when there are fewer KV heads than GPUs.
fn kv_heads_per_gpu(m: &Model, n: u64, runtime: Runtime) -> u64 {
    match runtime {
        Runtime::Vllm => m.kv_heads.div_ceil(n).max(1),
        _ => m.kv_heads,
    }
}

/// vLLM's profiled activation peak: `profile_run` pushes
/// `max_num_batched_tokens` dummy tokens through the model (hidden states,
/// QKV and the gated MLP's intermediates in bf16), then samples 256
/// sequences (f32 logits and probabilities). Calibrated on the PR #10511
/// log (Llama-3-8B, 8192 tokens: 1.26 GiB).
fn vllm_activation_peak(m: &Model, batched: u64) -> f64 {
    let h = m.hidden as f64;
    let qkv = ((m.heads + 2 * m.kv_heads) * m.head_dim) as f64;
    let ffn = if m.is_moe() {
        let width = if m.expert_intermediate > 0 {
            m.expert_intermediate
        } else {
            m.intermediate
        };
        (m.experts_used * width + m.shared_intermediate) as f64
    } else {
        m.dense_width() as f64
    };
    batched as f64 * (8.0 * h + 2.0 * qkv + 6.0 * ffn) + VLLM_MAX_NUM_SEQS * m.vocab as f64 * 8.0
}

/// Works out the memory `input` needs per GPU. For vLLM, the KV cache is
/// what `gpu_memory_utilization` of the chosen GPU leaves (or exactly the
/// context's worth when no GPU is chosen).
pub fn estimate(input: &Input) -> Breakdown {
    let m = &input.model;
    let hidden = m.hidden as f64;
    let n = input.tensor_parallel.max(1);
    let kv_heads = kv_heads_per_gpu(m, n, input.runtime);
    let per_layer_token = 2.0 * (kv_heads * m.head_dim) as f64 * input.kv.bytes();
    let (mut weights, mut replicated, host) = split_weights(input, n);
    let model = input.profiles.get(m, input.weights).total;
    let mut overhead = CUDA_CONTEXT;
    let parallel = input.parallel.max(1);
    // Layers of the fullest GPU (vLLM: every layer, sharded by heads).
    let gpu_layers = match input.runtime {
        Runtime::Vllm => m.layers,
        _ => m.layers.div_ceil(n),
    };
    let sliding = m.sliding_layers.min(m.layers);
    // Of the fullest GPU's layers, how many slide (spread evenly).
    let gpu_sliding = (sliding * gpu_layers).checked_div(m.layers).unwrap_or(0);
    let kv_of = |tokens: u64, window_tokens: u64| {
        let full = (gpu_layers - gpu_sliding) as f64 * tokens as f64;
        let swa = gpu_sliding as f64 * tokens.min(window_tokens) as f64;
        per_layer_token * (full + swa)
    };
    let window = if m.sliding_window > 0 && sliding > 0 {
        m.sliding_window
    } else {
        u64::MAX
    };
    let (kv_tokens, kv_cache, compute) = match input.runtime {
        Runtime::LlamaCpp | Runtime::Ollama => {
            let tokens = if input.runtime == Runtime::Ollama {
                // Ollama allocates num_ctx for each parallel request.
                input.context * parallel
            } else {
                // llama.cpp's -c is the total, shared by --parallel slots.
                input.context
            };
            let pad = llama_cpp_padding(input.flash_attention);
            let tokens = round_up(tokens.max(1), pad);
            // The sliding-window cache holds the window for each sequence
            // plus one micro-batch (llama.cpp without --swa-full).
            let swa = round_up(
                window.saturating_mul(parallel).saturating_add(input.ubatch),
                pad,
            );
            let ub = input.ubatch.clamp(1, tokens) as f64;
            // Logits for a micro-batch and a few hidden-state temporaries.
            let mut compute = ub * m.vocab as f64 * 4.0 + ub * hidden * 4.0 * 6.0;
            if !input.flash_attention {
                // The f32 KQ matrix: ubatch × context × heads.
                compute += ub * tokens as f64 * m.heads as f64 * 4.0;
            }
            (tokens, kv_of(tokens, swa), compute)
        }
        Runtime::Vllm => {
            let compute = vllm_activation_peak(m, input.max_batched_tokens.max(1)) + VLLM_NON_TORCH;
            if !input.enforce_eager {
                overhead += VLLM_CUDA_GRAPHS;
            }
            let per_token = kv_of(1, window);
            let tokens = match input.gpu.and_then(|i| input.gpus.get(i)) {
                Some(gpu) => {
                    let budget = input.gpu_memory_utilization * gpu.memory_mib * MIB;
                    // gpu_worker.determine_available_memory: the requested
                    // share minus weights and the profiled peak; the CUDA
                    // context and graphs live outside the requested share.
                    let free = budget - weights - compute;
                    let blocks = if free > 0.0 && per_token > 0.0 {
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
            (tokens, per_token * tokens as f64, compute)
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
                gpu_layers as f64 * per_layer + one_layer + 2.0 * t * m.vocab as f64 * 4.0
            } else {
                // Hidden states through one layer in 16 bits and the
                // last position's f32 logits per sequence.
                t * hidden * 2.0 * 8.0 + parallel as f64 * m.vocab as f64 * 4.0
            };
            if input.train {
                // bf16 gradients + fp32 master weights + AdamW m and v,
                // for the parameters on this GPU.
                let share = weights / model.max(1.0);
                weights += m.total_params() * share * (2.0 + 4.0 + 8.0);
            }
            let kv = if input.train {
                0.0
            } else {
                kv_of(tokens, window.saturating_mul(parallel))
            };
            (tokens, kv, compute)
        }
    };
    replicated += compute + overhead;
    if input.runtime == Runtime::Vllm && m.kv_heads < n {
        replicated += kv_cache;
    }
    Breakdown {
        weights,
        kv_cache,
        compute,
        overhead,
        kv_tokens,
        replicated,
        host,
        model,
    }
}

/// Partial offload for llama.cpp and Ollama: the largest number of layers
/// on the GPU(s) (`-ngl`, `num_gpu`; the head counts as one more layer,
/// as llama.cpp counts it) and the system RAM the rest needs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Offload {
    /// Layers on the GPU(s), counting the head as the last one.
    pub gpu_layers: u64,
    /// All layers, the head included (`-ngl` beyond this changes nothing).
    pub all_layers: u64,
    /// Bytes on the fullest GPU.
    pub gpu: f64,
    /// Bytes of weights and KV cache in system RAM.
    pub host: f64,
}

/// The offload that fits `gpu` when the whole model does not, for llama.cpp
/// and Ollama; `None` when it all fits, or for other runtimes.
pub fn offload(input: &Input, gpu: &Gpu) -> Option<Offload> {
    if !matches!(input.runtime, Runtime::LlamaCpp | Runtime::Ollama) {
        return None;
    }
    let full = estimate(input);
    let memory = gpu.memory_mib * MIB;
    if full.total() <= memory {
        return None;
    }
    let m = &input.model;
    let n = input.tensor_parallel.max(1);
    let p = input.profiles.get(m, input.weights);
    let (layers, embeddings, head) = (&p.layers, p.embeddings, p.head);
    let layer_count = m.layers as usize;
    let kv_per_layer = if m.layers == 0 {
        0.0
    } else {
        // The fullest GPU holds ceil(layers / n) layers' worth.
        full.kv_cache / m.layers.div_ceil(n) as f64
    };
    let fixed = full.compute + full.overhead;
    // llama.cpp offloads the last `ngl` layers; `ngl = layers + 1` adds the head.
    let at = |ngl: u64| {
        let on_gpu = (ngl.min(m.layers)) as usize;
        let chosen = &layers[layer_count - on_gpu..];
        let per_gpu = (on_gpu as u64).div_ceil(n) as usize;
        let largest = chosen.iter().copied().fold(0.0, f64::max);
        let weights = if n == 1 {
            chosen.iter().sum::<f64>()
        } else {
            per_gpu as f64 * largest
        };
        let head_on_gpu = if ngl > m.layers { head } else { 0.0 };
        let gpu = weights + per_gpu as f64 * kv_per_layer + head_on_gpu + fixed;
        let cpu_weights: f64 = layers[..layer_count - on_gpu].iter().sum();
        let cpu_kv = (layer_count - on_gpu) as f64 * kv_per_layer;
        let host = cpu_weights + cpu_kv + embeddings + (head - head_on_gpu);
        (gpu, host)
    };
    let mut ngl = m.layers + 1;
    loop {
        let (gpu, host) = at(ngl);
        if ngl == m.layers + 1 && gpu <= memory {
            return None;
        }
        if gpu <= memory || ngl == 0 {
            return Some(Offload {
                gpu_layers: ngl,
                all_layers: m.layers + 1,
                gpu,
                host,
            });
        }
        ngl -= 1;
    }
}
