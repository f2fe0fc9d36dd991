//! The KV cache: element types and bytes per token.

use crate::model::Model;

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
}

impl crate::choice::Choice for KvType {
    const ALL: &'static [KvType] = &[
        KvType::F16,
        KvType::Fp8,
        KvType::Q8_0,
        KvType::Q4_0,
        KvType::F32,
    ];
    const WHAT: &'static str = "KV cache type";

    fn name(self) -> &'static str {
        match self {
            KvType::F32 => "f32",
            KvType::F16 => "f16",
            KvType::Fp8 => "fp8",
            KvType::Q8_0 => "q8_0",
            KvType::Q4_0 => "q4_0",
        }
    }

    fn aliases(self) -> &'static [&'static str] {
        match self {
            KvType::F32 => &["fp32"],
            KvType::F16 => &["fp16", "bf16", "auto"],
            KvType::Fp8 => &["fp8_e4m3", "fp8_e5m2"],
            _ => &[],
        }
    }
}

/// Bytes of KV cache per token.
pub fn kv_bytes_per_token(model: &Model, kv: KvType) -> f64 {
    2.0 * (model.layers * model.kv_heads * model.head_dim) as f64 * kv.bytes()
}
