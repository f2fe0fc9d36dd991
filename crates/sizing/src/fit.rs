//! Will it fit: which GPUs, the largest context, and the changes that make it fit.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use crate::MIB;
use crate::choice::Choice as _;
use crate::formats::{WEIGHT_FORMATS, WeightFormat};
use crate::input::{Gpu, Input};
use crate::kv::KvType;
use crate::runtime::{Breakdown, Runtime, estimate, offload};

/// One GPU's verdict.
#[derive(Debug, Clone, PartialEq)]
pub struct Fit {
    /// Index into the catalogue.
    pub gpu: usize,
    /// Total minus need, in bytes (negative when it does not fit).
    pub headroom: f64,
}

/// True when `need` fits on `gpu` (for vLLM: within `gpu_memory_utilization`).
pub(crate) fn fits(input: &Input, b: &Breakdown, gpu: &Gpu) -> bool {
    headroom(input, b, gpu) >= 0.0
}

pub(crate) fn headroom(input: &Input, b: &Breakdown, gpu: &Gpu) -> f64 {
    let total = gpu.memory_mib * MIB;
    match input.runtime {
        Runtime::Vllm => {
            // vLLM fails at start-up unless one full-length sequence fits in
            // the KV cache left after weights and activations, within
            // gpu_memory_utilization; the CUDA context and graphs must fit
            // in the share it leaves.
            let budget = input.gpu_memory_utilization * total;
            let per_token = if b.kv_tokens == 0 {
                0.0
            } else {
                b.kv_cache / b.kv_tokens as f64
            };
            let need = b.weights + b.compute + per_token * input.context as f64;
            (budget - need).min(total - budget - b.overhead)
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
            if let Some(n) = [2, 4, 8]
                .into_iter()
                .filter(|&n| n > input.tensor_parallel)
                .find(|&n| fits_with(&|i| i.tensor_parallel = n))
            {
                out.push(format!("--tensor-parallel-size {n}"));
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
            if let Some(o) = offload(input, gpu) {
                out.push(format!("-ngl {}", o.gpu_layers));
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
            if let Some(o) = offload(input, gpu) {
                out.push(format!("PARAMETER num_gpu {}", o.gpu_layers));
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
    let current = input.profiles.get(&input.model, input.weights).total;
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
    // Smaller formats, largest first (an insertion sort: a library sort
    // would add kilobytes to the WebAssembly).
    let mut sized: Vec<(f64, WeightFormat)> = Vec::new();
    for f in WEIGHT_FORMATS {
        let bytes = input.profiles.get(&input.model, f).total;
        if bytes < current && usable(f) {
            let at = sized
                .iter()
                .position(|(b, _)| *b < bytes)
                .unwrap_or(sized.len());
            sized.insert(at, (bytes, f));
        }
    }
    let smaller: Vec<WeightFormat> = sized.into_iter().map(|(_, f)| f).collect();
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
