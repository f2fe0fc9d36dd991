//! GPU memory sizing for LLM inference and fine-tuning.
//!
//! Pure computation with no dependencies (only `core` and `alloc`), so the same
//! code runs natively (for `errata size` and for the result pre-rendered into
//! each page) and as WebAssembly in the browser. The browser and the command
//! line both call [`handle`]: a small text request in, a JSON answer out.
//!
//! What it models, and why each term is there:
//! - **Weights**: parameters × real bits per weight. GGUF block formats use
//!   ggml's block sizes (Q8_0 is 34 bytes per 32 weights); the K-quant mixes
//!   use the whole-file bits per weight llama.cpp reports for Llama-3-8B.
//!   AWQ/GPTQ and FP8/INT8 keep the embeddings and LM head in 16 bits.
//! - **KV cache**: 2 × layers × KV heads × head_dim × element size × tokens,
//!   with KV heads (not attention heads) under grouped-query attention, and
//!   tokens counted the way each runtime allocates them.
//! - **Compute**: llama.cpp's compute buffer (which holds the KQ matrix when
//!   flash attention is off), vLLM's profiled activation peak, PyTorch's
//!   forward activations, and for fine-tuning gradients, AdamW states and
//!   activations (Korthikanti et al., 34·s·b·h bytes per layer with flash
//!   attention; two hidden states per layer with checkpointing).
//! - **Overhead**: the CUDA context the driver reserves on the GPU, plus
//!   vLLM's CUDA graphs and non-torch allocations.
//!
//! Every figure is in GiB (2^30 bytes), as the runtimes print them.
#![cfg_attr(target_arch = "wasm32", no_std)]

extern crate alloc;

#[cfg(target_arch = "wasm32")]
mod wasm;

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::fmt::Write as _;

/// Bytes in one GiB (2^30).
pub const GIB: f64 = 1_073_741_824.0;
/// Bytes in one MiB (2^20).
pub const MIB: f64 = 1_048_576.0;

/// The architecture numbers that decide memory, as in a model's `config.json`.
#[derive(Debug, Clone, PartialEq)]
pub struct Model {
    /// Total parameters (all experts of a mixture-of-experts model).
    pub params: f64,
    /// `num_hidden_layers`.
    pub layers: u64,
    /// `hidden_size`.
    pub hidden: u64,
    /// `num_attention_heads`.
    pub heads: u64,
    /// `num_key_value_heads` (equal to `heads` without GQA).
    pub kv_heads: u64,
    /// `head_dim` (often `hidden / heads`, but not always: Gemma-2 9B uses 256).
    pub head_dim: u64,
    /// `vocab_size`.
    pub vocab: u64,
    /// `tie_word_embeddings`: the LM head shares the embedding matrix.
    pub tied_embeddings: bool,
}

impl Model {
    /// Parameters in the embedding matrix and the LM head.
    fn embedding_params(&self) -> f64 {
        let one = (self.vocab * self.hidden) as f64;
        if self.tied_embeddings { one } else { 2.0 * one }
    }
}

/// How the weights are stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WeightFormat {
    /// 32-bit float.
    Fp32,
    /// bfloat16.
    Bf16,
    /// float16.
    Fp16,
    /// FP8 (e4m3), embeddings and LM head kept in 16 bits.
    Fp8,
    /// INT8 (LLM.int8 / W8A16), embeddings and LM head kept in 16 bits.
    Int8,
    /// AWQ 4-bit, group size 128.
    Awq4,
    /// GPTQ 4-bit, group size 128.
    Gptq4,
    /// GGUF Q8_0.
    Q8_0,
    /// GGUF Q6_K.
    Q6K,
    /// GGUF Q5_K_M.
    Q5KM,
    /// GGUF Q5_0.
    Q5_0,
    /// GGUF Q4_K_M.
    Q4KM,
    /// GGUF Q4_0.
    Q4_0,
    /// GGUF Q3_K_M.
    Q3KM,
    /// GGUF Q2_K.
    Q2K,
    /// GGUF IQ4_XS.
    Iq4Xs,
}

/// Every weight format, largest first.
pub const WEIGHT_FORMATS: [WeightFormat; 16] = [
    WeightFormat::Fp32,
    WeightFormat::Bf16,
    WeightFormat::Fp16,
    WeightFormat::Q8_0,
    WeightFormat::Fp8,
    WeightFormat::Int8,
    WeightFormat::Q6K,
    WeightFormat::Q5KM,
    WeightFormat::Q5_0,
    WeightFormat::Q4KM,
    WeightFormat::Q4_0,
    WeightFormat::Iq4Xs,
    WeightFormat::Awq4,
    WeightFormat::Gptq4,
    WeightFormat::Q3KM,
    WeightFormat::Q2K,
];

/// Whole-file bits per weight of a K-quant mix: llama.cpp's quantize table
/// gives the Llama-3-8B (8,030,261,248 parameters) file size in GiB.
const fn kquant_bpw(gib: f64) -> f64 {
    gib * GIB * 8.0 / 8_030_261_248.0
}

impl WeightFormat {
    /// The name used in front matter, URLs and the command line.
    pub fn name(self) -> &'static str {
        match self {
            WeightFormat::Fp32 => "fp32",
            WeightFormat::Bf16 => "bf16",
            WeightFormat::Fp16 => "fp16",
            WeightFormat::Fp8 => "fp8",
            WeightFormat::Int8 => "int8",
            WeightFormat::Awq4 => "awq",
            WeightFormat::Gptq4 => "gptq",
            WeightFormat::Q8_0 => "q8_0",
            WeightFormat::Q6K => "q6_k",
            WeightFormat::Q5KM => "q5_k_m",
            WeightFormat::Q5_0 => "q5_0",
            WeightFormat::Q4KM => "q4_k_m",
            WeightFormat::Q4_0 => "q4_0",
            WeightFormat::Q3KM => "q3_k_m",
            WeightFormat::Q2K => "q2_k",
            WeightFormat::Iq4Xs => "iq4_xs",
        }
    }

    /// Parses a name (case-insensitive; `f16`, `float16`, `awq4`... accepted).
    pub fn parse(name: &str) -> Option<WeightFormat> {
        let lower = name.trim().to_ascii_lowercase();
        let canonical = match lower.as_str() {
            "f32" | "float32" => "fp32",
            "f16" | "float16" | "half" => "fp16",
            "bfloat16" => "bf16",
            "awq4" | "awq-4bit" => "awq",
            "gptq4" | "gptq-4bit" => "gptq",
            "q4_k" => "q4_k_m",
            "q5_k" => "q5_k_m",
            "q3_k" => "q3_k_m",
            other => other,
        };
        WEIGHT_FORMATS
            .iter()
            .copied()
            .find(|f| f.name() == canonical)
    }

    /// True for GGUF formats (run by llama.cpp and Ollama).
    pub fn is_gguf(self) -> bool {
        matches!(
            self,
            WeightFormat::Q8_0
                | WeightFormat::Q6K
                | WeightFormat::Q5KM
                | WeightFormat::Q5_0
                | WeightFormat::Q4KM
                | WeightFormat::Q4_0
                | WeightFormat::Q3KM
                | WeightFormat::Q2K
                | WeightFormat::Iq4Xs
        )
    }

    /// Bits per quantised weight.
    pub fn bits_per_weight(self) -> f64 {
        match self {
            WeightFormat::Fp32 => 32.0,
            WeightFormat::Bf16 | WeightFormat::Fp16 => 16.0,
            WeightFormat::Fp8 | WeightFormat::Int8 => 8.0,
            // 4-bit weights + an fp16 scale and a 4-bit zero point per group of 128.
            WeightFormat::Awq4 | WeightFormat::Gptq4 => 4.0 + (16.0 + 4.0) / 128.0,
            // block_q8_0: fp16 scale + 32 int8 = 34 bytes per 32 weights.
            WeightFormat::Q8_0 => 34.0 * 8.0 / 32.0,
            // block_q5_0: fp16 scale + 4 bytes of high bits + 16 bytes = 22 bytes per 32.
            WeightFormat::Q5_0 => 22.0 * 8.0 / 32.0,
            // block_q4_0: fp16 scale + 16 bytes = 18 bytes per 32.
            WeightFormat::Q4_0 => 18.0 * 8.0 / 32.0,
            // block_iq4_xs: 136 bytes per 256 weights.
            WeightFormat::Iq4Xs => 136.0 * 8.0 / 256.0,
            WeightFormat::Q6K => kquant_bpw(6.14),
            WeightFormat::Q5KM => kquant_bpw(5.33),
            WeightFormat::Q4KM => kquant_bpw(4.58),
            WeightFormat::Q3KM => kquant_bpw(3.74),
            WeightFormat::Q2K => kquant_bpw(2.96),
        }
    }

    /// Quantised checkpoints (AWQ, GPTQ, FP8, INT8) keep the embeddings and
    /// the LM head in 16 bits; GGUF figures are whole-file already.
    fn keeps_embeddings_16bit(self) -> bool {
        matches!(
            self,
            WeightFormat::Fp8 | WeightFormat::Int8 | WeightFormat::Awq4 | WeightFormat::Gptq4
        )
    }
}

/// The KV-cache element type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KvType {
    /// 32-bit float.
    F32,
    /// 16-bit float (f16 or bf16).
    F16,
    /// 8-bit float (vLLM `--kv-cache-dtype fp8`).
    Fp8,
    /// ggml q8_0 (llama.cpp `-ctk q8_0`, Ollama `OLLAMA_KV_CACHE_TYPE=q8_0`).
    Q8_0,
    /// ggml q4_0.
    Q4_0,
}

impl KvType {
    /// Bytes per cached element, with ggml block overhead.
    pub fn bytes(self) -> f64 {
        match self {
            KvType::F32 => 4.0,
            KvType::F16 => 2.0,
            KvType::Fp8 => 1.0,
            KvType::Q8_0 => 34.0 / 32.0,
            KvType::Q4_0 => 18.0 / 32.0,
        }
    }

    /// The name used on the command line.
    pub fn name(self) -> &'static str {
        match self {
            KvType::F32 => "f32",
            KvType::F16 => "f16",
            KvType::Fp8 => "fp8",
            KvType::Q8_0 => "q8_0",
            KvType::Q4_0 => "q4_0",
        }
    }

    /// Parses a name (`f16`, `bf16`, `fp16`, `fp8`, `q8_0`...).
    pub fn parse(name: &str) -> Option<KvType> {
        match name.trim().to_ascii_lowercase().as_str() {
            "f32" | "fp32" => Some(KvType::F32),
            "f16" | "fp16" | "bf16" | "auto" => Some(KvType::F16),
            "fp8" | "fp8_e4m3" | "fp8_e5m2" => Some(KvType::Fp8),
            "q8_0" => Some(KvType::Q8_0),
            "q4_0" => Some(KvType::Q4_0),
            _ => None,
        }
    }
}

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

fn round_up(value: u64, multiple: u64) -> u64 {
    value.div_ceil(multiple) * multiple
}

/// Bytes of KV cache per token.
pub fn kv_bytes_per_token(model: &Model, kv: KvType) -> f64 {
    2.0 * (model.layers * model.kv_heads * model.head_dim) as f64 * kv.bytes()
}

/// Bytes of the weights in `format`.
pub fn weight_bytes(model: &Model, format: WeightFormat) -> f64 {
    if format.keeps_embeddings_16bit() {
        let embeddings = model.embedding_params().min(model.params);
        (model.params - embeddings) * format.bits_per_weight() / 8.0 + embeddings * 2.0
    } else {
        model.params * format.bits_per_weight() / 8.0
    }
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

/// One GPU's verdict.
#[derive(Debug, Clone, PartialEq)]
pub struct Fit {
    /// Index into the catalogue.
    pub gpu: usize,
    /// Total minus need, in bytes (negative when it does not fit).
    pub headroom: f64,
}

/// True when `need` fits on `gpu` (for vLLM: within `gpu_memory_utilization`).
fn fits(input: &Input, b: &Breakdown, gpu: &Gpu) -> bool {
    headroom(input, b, gpu) >= 0.0
}

fn headroom(input: &Input, b: &Breakdown, gpu: &Gpu) -> f64 {
    let total = gpu.memory_mib * MIB;
    match input.runtime {
        Runtime::Vllm => {
            // vLLM fails at start-up unless one full-length sequence fits in
            // the KV cache left after weights and activations.
            let budget = input.gpu_memory_utilization * total;
            let need = b.weights
                + b.compute
                + b.overhead
                + kv_bytes_per_token(&input.model, input.kv) * input.context as f64;
            budget - need
        }
        _ => total - b.total(),
    }
}

/// The catalogue GPUs the input fits on, with headroom, in catalogue order.
pub fn fits_on(input: &Input) -> Vec<Fit> {
    input
        .gpus
        .iter()
        .enumerate()
        .filter_map(|(i, gpu)| {
            let mut one = input.clone();
            one.gpu = Some(i);
            let b = estimate(&one);
            fits(&one, &b, gpu).then(|| Fit {
                gpu: i,
                headroom: headroom(&one, &b, gpu),
            })
        })
        .collect()
}

/// The largest context (in steps of 256 tokens, up to 1,048,576) that fits
/// the chosen GPU with everything else unchanged; `None` if not even 256 fits.
pub fn max_context(input: &Input) -> Option<u64> {
    let gpu = input.gpus.get(input.gpu?)?;
    let fits_at = |context: u64| {
        let mut one = input.clone();
        one.context = context;
        let b = estimate(&one);
        fits(&one, &b, gpu)
    };
    let step = 256;
    if !fits_at(step) {
        return None;
    }
    let (mut lo, mut hi) = (1u64, 4096u64);
    while hi > lo {
        let mid = (lo + hi).div_ceil(2);
        if fits_at(mid * step) {
            lo = mid
        } else {
            hi = mid - 1
        }
    }
    Some(lo * step)
}

/// Concrete changes that make the input fit the chosen GPU, each checked by
/// recomputing, in the runtime's own syntax.
pub fn suggestions(input: &Input) -> Vec<String> {
    let Some(gpu) = input.gpu.and_then(|i| input.gpus.get(i)) else {
        return Vec::new();
    };
    let fits_with = |change: &dyn Fn(&mut Input)| {
        let mut one = input.clone();
        change(&mut one);
        let b = estimate(&one);
        fits(&one, &b, gpu)
    };
    let mut out = Vec::new();
    if fits_with(&|_| {}) {
        return out;
    }
    let max = max_context(input);
    match input.runtime {
        Runtime::Vllm => {
            if let Some(n) = max {
                out.push(format!("--max-model-len {n}"));
            }
            if input.kv != KvType::Fp8 && fits_with(&|i| i.kv = KvType::Fp8) {
                out.push("--kv-cache-dtype fp8".to_string());
            }
            if input.gpu_memory_utilization < 0.95
                && fits_with(&|i| i.gpu_memory_utilization = 0.95)
            {
                out.push("--gpu-memory-utilization 0.95".to_string());
            }
            if !input.enforce_eager && fits_with(&|i| i.enforce_eager = true) {
                out.push("--enforce-eager".to_string());
            }
        }
        Runtime::LlamaCpp => {
            let quantised = |i: &mut Input| {
                i.flash_attention = true;
                i.kv = KvType::Q8_0;
            };
            if fits_with(&quantised) {
                out.push(format!("-c {} -fa on -ctk q8_0 -ctv q8_0", input.context));
            } else if let Some(n) = max {
                out.push(format!("-c {n}"));
            }
            if input.parallel > 1 && fits_with(&|i| i.parallel = 1) {
                out.push("--parallel 1".to_string());
            }
        }
        Runtime::Ollama => {
            if fits_with(&|i| {
                i.flash_attention = true;
                i.kv = KvType::Q8_0;
            }) {
                out.push("OLLAMA_FLASH_ATTENTION=1 OLLAMA_KV_CACHE_TYPE=q8_0".to_string());
            }
            if input.parallel > 1 && fits_with(&|i| i.parallel = 1) {
                out.push("OLLAMA_NUM_PARALLEL=1".to_string());
            }
            if let Some(n) = max {
                out.push(format!("PARAMETER num_ctx {n}"));
            }
        }
        Runtime::PyTorch => {
            if input.train && !input.checkpointing && fits_with(&|i| i.checkpointing = true) {
                out.push("model.gradient_checkpointing_enable()".to_string());
            }
            if let Some(n) = max {
                out.push(format!("max sequence length {n}"));
            }
        }
    }
    // A smaller weight format that fits, as large as possible; failing
    // that, the largest one that fits with a shorter context.
    let current = input.weights.bits_per_weight();
    let usable = |f: WeightFormat| match input.runtime {
        Runtime::LlamaCpp | Runtime::Ollama => {
            f.is_gguf()
                || matches!(
                    f,
                    WeightFormat::Fp16 | WeightFormat::Bf16 | WeightFormat::Fp32
                )
        }
        _ => !f.is_gguf(),
    };
    let smaller: Vec<WeightFormat> = WEIGHT_FORMATS
        .iter()
        .copied()
        .filter(|f| f.bits_per_weight() < current && usable(*f))
        .collect();
    if let Some(f) = smaller
        .iter()
        .copied()
        .find(|&f| fits_with(&|i| i.weights = f))
    {
        out.push(format!("weights {}", f.name()));
    } else {
        let shorter = smaller.iter().copied().find_map(|f| {
            let mut one = input.clone();
            one.weights = f;
            max_context(&one).map(|n| (f, n))
        });
        if let Some((f, n)) = shorter {
            let context = match input.runtime {
                Runtime::Vllm => format!("--max-model-len {n}"),
                Runtime::LlamaCpp => format!("-c {n}"),
                Runtime::Ollama => format!("num_ctx {n}"),
                Runtime::PyTorch => format!("max sequence length {n}"),
            };
            out.push(format!("weights {} with {context}", f.name()));
        }
    }
    out
}

/// The longest context a request may ask about (10M tokens).
pub const MAX_CONTEXT: u64 = 10_000_000;

/// Parses a request: one `key=value` per line (or `&`-separated), with
/// repeated `gpu=<name>|<MiB>` lines for the catalogue.
///
/// Keys: `params`, `layers`, `hidden`, `heads`, `kv_heads`, `head_dim`,
/// `vocab`, `tied`, `weights`, `runtime`, `context`, `parallel`, `kv`,
/// `fa`, `ubatch`, `util`, `batched`, `eager`, `train`, `checkpointing`,
/// `gpu`, `target` (a GPU name).
pub fn parse_request(text: &str) -> Result<Input, String> {
    let mut model = Model {
        params: 0.0,
        layers: 0,
        hidden: 0,
        heads: 0,
        kv_heads: 0,
        head_dim: 0,
        vocab: 0,
        tied_embeddings: false,
    };
    let mut input = Input::new(model.clone());
    let mut target: Option<String> = None;
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
            "params" => model.params = num(key, value)?,
            "layers" => model.layers = int(key, value)?,
            "hidden" => model.hidden = int(key, value)?,
            "heads" => model.heads = int(key, value)?,
            "kv_heads" => model.kv_heads = int(key, value)?,
            "head_dim" => model.head_dim = int(key, value)?,
            "vocab" => model.vocab = int(key, value)?,
            "tied" => model.tied_embeddings = flag(value),
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
        ("params", model.params as u64),
        ("layers", model.layers),
        ("hidden", model.hidden),
        ("heads", model.heads),
        ("vocab", model.vocab),
    ] {
        if value == 0 {
            return Err(format!("`{key}` is required"));
        }
    }
    if input.context == 0 || input.context > MAX_CONTEXT {
        return Err(format!(
            "`context` must be between 1 and {MAX_CONTEXT} tokens"
        ));
    }
    if input.parallel == 0 {
        return Err("`parallel` must be at least 1".to_string());
    }
    if let Some(name) = target {
        let found = input
            .gpus
            .iter()
            .position(|g| g.name.eq_ignore_ascii_case(&name));
        input.gpu = Some(found.ok_or_else(|| format!("unknown GPU `{name}`"))?);
    }
    input.model = model;
    Ok(input)
}

/// `bytes` in GiB with two decimals. Written by hand: float formatting
/// would more than double the size of the WebAssembly.
fn gib(bytes: f64) -> String {
    let hundredths = bytes / GIB * 100.0;
    let rounded = if hundredths >= 0.0 {
        (hundredths + 0.5) as i64
    } else {
        (hundredths - 0.5) as i64
    };
    let sign = if rounded < 0 { "-" } else { "" };
    let abs = rounded.unsigned_abs();
    format!("{sign}{}.{}{}", abs / 100, abs / 10 % 10, abs % 10)
}

/// Parses a non-negative decimal such as `0.9` or `24564` (no exponents).
/// Written by hand for the same reason as [`gib`].
fn parse_decimal(text: &str) -> Option<f64> {
    let text = text.trim();
    let (whole, fraction) = text.split_once('.').unwrap_or((text, ""));
    if whole.is_empty() && fraction.is_empty() {
        return None;
    }
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if !digits(whole) || !digits(fraction) || whole.len() > 18 {
        return None;
    }
    let mut value = if whole.is_empty() {
        0.0
    } else {
        whole.parse::<u64>().ok()? as f64
    };
    let mut scale = 0.1;
    for b in fraction.bytes().take(12) {
        value += f64::from(b - b'0') * scale;
        scale /= 10.0;
    }
    Some(value)
}

fn json_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '<' => out.push_str("\\u003c"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// The answer to a request as JSON (the schema of `errata size --format json`):
/// GiB figures as numbers with two decimals, the GPUs it fits on, the largest
/// context for the target GPU, and suggestions.
pub fn answer_json(input: &Input) -> String {
    let b = estimate(input);
    let mut out = String::with_capacity(512);
    out.push('{');
    let _ = write!(
        out,
        "\"weights_gib\":{},\"kv_cache_gib\":{},\"compute_gib\":{},\"overhead_gib\":{},\"total_gib\":{},\"kv_tokens\":{}",
        gib(b.weights),
        gib(b.kv_cache),
        gib(b.compute),
        gib(b.overhead),
        gib(b.total()),
        b.kv_tokens
    );
    out.push_str(",\"runtime\":");
    json_string(&mut out, input.runtime.name());
    out.push_str(",\"weights\":");
    json_string(&mut out, input.weights.name());
    out.push_str(",\"kv_type\":");
    json_string(&mut out, input.kv.name());
    let _ = write!(out, ",\"context\":{}", input.context);
    out.push_str(",\"target\":");
    match input.gpu.and_then(|i| input.gpus.get(i).map(|g| (i, g))) {
        Some((i, gpu)) => {
            let mut one = input.clone();
            one.gpu = Some(i);
            let h = headroom(&one, &estimate(&one), gpu);
            out.push_str("{\"name\":");
            json_string(&mut out, &gpu.name);
            let _ = write!(
                out,
                ",\"memory_gib\":{},\"fits\":{},\"headroom_gib\":{}}}",
                gib(gpu.memory_mib * MIB),
                h >= 0.0,
                gib(h)
            );
        }
        None => out.push_str("null"),
    }
    out.push_str(",\"fits\":[");
    for (n, fit) in fits_on(input).iter().enumerate() {
        if n > 0 {
            out.push(',');
        }
        let gpu = &input.gpus[fit.gpu];
        out.push_str("{\"gpu\":");
        json_string(&mut out, &gpu.name);
        let _ = write!(
            out,
            ",\"memory_gib\":{},\"headroom_gib\":{}}}",
            gib(gpu.memory_mib * MIB),
            gib(fit.headroom)
        );
    }
    out.push_str("],\"max_context\":");
    match max_context(input) {
        Some(n) => {
            let _ = write!(out, "{n}");
        }
        None => out.push_str("null"),
    }
    out.push_str(",\"suggestions\":[");
    for (n, s) in suggestions(input).iter().enumerate() {
        if n > 0 {
            out.push(',');
        }
        json_string(&mut out, s);
    }
    out.push_str("]}");
    out
}

/// Parses `request` and answers it: JSON on success, `{"error": "..."}` otherwise.
/// The page's WebAssembly and `errata size` both go through here.
pub fn handle(request: &str) -> String {
    match parse_request(request) {
        Ok(input) => answer_json(&input),
        Err(message) => {
            let mut out = String::from("{\"error\":");
            json_string(&mut out, &message);
            out.push('}');
            out
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB_U: f64 = 1_048_576.0;

    fn llama2_7b() -> Model {
        Model {
            params: 6_738_415_616.0,
            layers: 32,
            hidden: 4096,
            heads: 32,
            kv_heads: 32,
            head_dim: 128,
            vocab: 32000,
            tied_embeddings: false,
        }
    }

    fn llama31_8b() -> Model {
        Model {
            params: 8_030_261_248.0,
            layers: 32,
            hidden: 4096,
            heads: 32,
            kv_heads: 8,
            head_dim: 128,
            vocab: 128_256,
            tied_embeddings: false,
        }
    }

    #[test]
    fn llama2_7b_f16_kv_at_2048_is_512_mib_each() {
        // llama.cpp: "KV self size = 1024.00 MiB, K (f16): 512.00 MiB, V (f16): 512.00 MiB".
        let per_token = kv_bytes_per_token(&llama2_7b(), KvType::F16);
        assert_eq!(per_token * 2048.0 / 2.0, 512.0 * MIB_U);
        let mut input = Input::new(llama2_7b());
        input.runtime = Runtime::LlamaCpp;
        input.context = 2048;
        assert_eq!(estimate(&input).kv_cache, 1024.0 * MIB_U);
    }

    #[test]
    fn llama31_8b_bf16_weights_are_14_96_gib() {
        let w = weight_bytes(&llama31_8b(), WeightFormat::Bf16) / GIB;
        assert!((w - 14.96).abs() < 0.005, "{w}");
    }

    #[test]
    fn gqa_uses_kv_heads() {
        // 32 layers × 8 KV heads × 128 × 2 (K and V) × 2 bytes = 128 KiB per token.
        assert_eq!(kv_bytes_per_token(&llama31_8b(), KvType::F16), 131_072.0);
    }

    #[test]
    fn ggml_block_sizes() {
        assert_eq!(WeightFormat::Q8_0.bits_per_weight(), 8.5);
        assert_eq!(WeightFormat::Q4_0.bits_per_weight(), 4.5);
        assert_eq!(KvType::Q8_0.bytes(), 1.0625);
        assert_eq!(KvType::Q4_0.bytes(), 0.5625);
        // Q4_K_M of Llama-3-8B is 4.58 GiB as a whole file.
        let q4 = weight_bytes(&llama31_8b(), WeightFormat::Q4KM) / GIB;
        assert!((q4 - 4.58).abs() < 0.005, "{q4}");
    }

    #[test]
    fn llama_cpp_shares_context_ollama_multiplies_it() {
        let mut input = Input::new(llama31_8b());
        input.context = 8192;
        input.parallel = 4;
        input.runtime = Runtime::LlamaCpp;
        assert_eq!(estimate(&input).kv_tokens, 8192);
        input.runtime = Runtime::Ollama;
        assert_eq!(estimate(&input).kv_tokens, 32768);
        // Padding: 1000 tokens become 1024 with flash attention on.
        input.runtime = Runtime::LlamaCpp;
        input.context = 1000;
        assert_eq!(estimate(&input).kv_tokens, 1024);
    }

    #[test]
    fn flash_attention_shrinks_the_llama_cpp_compute_buffer() {
        let mut input = Input::new(llama31_8b());
        input.runtime = Runtime::LlamaCpp;
        input.context = 32768;
        let on = estimate(&input).compute;
        input.flash_attention = false;
        let off = estimate(&input).compute;
        assert!(off > on + GIB, "off {off} on {on}");
    }

    #[test]
    fn training_counts_gradients_and_adam_and_checkpointing_helps() {
        let mut input = Input::new(llama31_8b());
        input.train = true;
        input.weights = WeightFormat::Bf16;
        input.context = 2048;
        let b = estimate(&input);
        // 2 + 2 + 4 + 8 bytes per parameter.
        assert!((b.weights / 8_030_261_248.0 - 16.0).abs() < 1e-9);
        input.checkpointing = true;
        assert!(estimate(&input).compute < b.compute / 2.0);
    }

    fn catalogue() -> Vec<Gpu> {
        alloc::vec![
            Gpu {
                name: "RTX 3060 12GB".into(),
                memory_mib: 12288.0
            },
            Gpu {
                name: "RTX 4090".into(),
                memory_mib: 24564.0
            },
            Gpu {
                name: "H100 80GB".into(),
                memory_mib: 81559.0
            },
        ]
    }

    #[test]
    fn fits_and_max_context_agree() {
        let mut input = Input::new(llama31_8b());
        input.runtime = Runtime::LlamaCpp;
        input.weights = WeightFormat::Q4KM;
        input.context = 8192;
        input.gpus = catalogue();
        input.gpu = Some(0);
        let names: Vec<_> = fits_on(&input)
            .iter()
            .map(|f| input.gpus[f.gpu].name.clone())
            .collect();
        assert_eq!(names, ["RTX 3060 12GB", "RTX 4090", "H100 80GB"]);
        let max = max_context(&input).unwrap();
        let mut at = input.clone();
        at.context = max;
        assert!(fits(&at, &estimate(&at), &at.gpus[0]));
        at.context = max + 256;
        assert!(!fits(&at, &estimate(&at), &at.gpus[0]));
    }

    #[test]
    fn vllm_suggestions_are_in_its_own_syntax_and_really_fit() {
        let mut input = Input::new(llama31_8b());
        input.runtime = Runtime::Vllm;
        input.weights = WeightFormat::Bf16;
        input.context = 131_072;
        input.gpus = catalogue();
        input.gpu = Some(1);
        let s = suggestions(&input);
        assert!(s.iter().any(|s| s.starts_with("--max-model-len ")), "{s:?}");
        let n: u64 = s[0].trim_start_matches("--max-model-len ").parse().unwrap();
        let mut fixed = input.clone();
        fixed.context = n;
        assert!(fits(&fixed, &estimate(&fixed), &fixed.gpus[1]));
    }

    #[test]
    fn too_big_models_get_a_smaller_format_with_a_context_that_fits() {
        let qwen32 = Model {
            params: 32_763_876_352.0,
            layers: 64,
            hidden: 5120,
            heads: 40,
            kv_heads: 8,
            head_dim: 128,
            vocab: 152_064,
            tied_embeddings: false,
        };
        let mut input = Input::new(qwen32);
        input.runtime = Runtime::Vllm;
        input.weights = WeightFormat::Bf16;
        input.context = 32768;
        input.gpus = catalogue();
        input.gpu = Some(1);
        let b = estimate(&input);
        // Not fitting, the KV cache shows what one full-length sequence needs.
        assert_eq!(b.kv_tokens, 32768);
        let s = suggestions(&input);
        let last = s.last().unwrap();
        let (format, n) = last
            .strip_prefix("weights ")
            .unwrap()
            .split_once(" with --max-model-len ")
            .unwrap();
        let mut fixed = input.clone();
        fixed.weights = WeightFormat::parse(format).unwrap();
        fixed.context = n.parse().unwrap();
        assert!(fits(&fixed, &estimate(&fixed), &fixed.gpus[1]), "{last}");
    }

    #[test]
    fn hand_written_number_formatting() {
        assert_eq!(gib(14.96 * GIB), "14.96");
        assert_eq!(gib(4.0 * GIB), "4.00");
        assert_eq!(gib(0.004 * GIB), "0.00");
        assert_eq!(gib(-11.386 * GIB), "-11.39");
        assert_eq!(parse_decimal("0.9"), Some(0.9));
        assert_eq!(parse_decimal("24564"), Some(24564.0));
        for bad in ["", ".", "-1", "1e3", "x", "1.2.3"] {
            assert_eq!(parse_decimal(bad), None, "{bad}");
        }
    }

    #[test]
    fn requests_round_trip() {
        let answer = handle(
            "params=8030261248\nlayers=32\nhidden=4096\nheads=32\nkv_heads=8\nhead_dim=128\nvocab=128256\nweights=bf16\ncontext=8192\nruntime=vllm\ngpu=RTX 4090|24564\ntarget=RTX 4090",
        );
        assert!(answer.starts_with("{\"weights_gib\":14.96,"), "{answer}");
        assert!(
            answer.contains("\"target\":{\"name\":\"RTX 4090\""),
            "{answer}"
        );
        assert!(handle("layers=x").contains("\"error\":\"`layers` must be a whole number"));
        assert!(
            handle("params=1\nlayers=1\nhidden=1\nheads=1\nvocab=1\nbogus=2")
                .contains("unknown key `bogus`")
        );
    }
}
