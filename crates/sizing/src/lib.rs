//! GPU memory sizing for LLM inference and fine-tuning.
//!
//! Pure computation with no dependencies (only `core` and `alloc`), so the same
//! code runs natively (for `errata size` and for the result pre-rendered into
//! each page) and as WebAssembly in the browser. The browser and the command
//! line build the same typed [`Input`] and get the same [`Answer`]: natively
//! through [`answer`], in the browser through [`handle`] (a small text
//! request in, a JSON answer out; text and JSON exist only at that boundary).
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

mod answer;
mod choice;
mod fit;
mod formats;
mod input;
mod json;
mod kv;
mod model;
pub mod parse;
mod request;
mod runtime;

pub use answer::{Answer, Target, answer};
pub use choice::Choice;
pub use fit::{Fit, fits_on, max_context, suggestions};
pub use formats::{GgmlType, Profile, ProfileCache, WeightFormat, gguf_type, weight_bytes};
pub use input::{Gpu, Input, MAX_CONTEXT, MAX_GPUS};
pub use json::{answer_json, write_answer};
pub use kv::{KvType, kv_bytes_per_token};
pub use model::{Class, Model, Tensor};
pub use request::{input_request, model_request, parse_request};
pub use runtime::{
    Breakdown, CUDA_CONTEXT, Offload, Runtime, VLLM_CUDA_GRAPHS, VLLM_NON_TORCH, estimate, offload,
};

/// Bytes in one GiB (2^30).
pub const GIB: f64 = 1_073_741_824.0;
/// Bytes in one MiB (2^20).
pub const MIB: f64 = 1_048_576.0;

/// Parses `request` and answers it: JSON on success, `{"error": "..."}` otherwise.
/// The page's WebAssembly and `errata size` both go through here.
pub fn handle(request: &str) -> alloc::string::String {
    match parse_request(request) {
        Ok(input) => answer_json(&input),
        Err(message) => json::error(&message),
    }
}

#[cfg(test)]
mod log_tests;
#[cfg(test)]
mod tests;
