//! GPU memory sizing for LLM inference and training.
//!
//! Pure computation with no dependencies, so the same code runs natively
//! (for `errata size` and build-time pre-rendering) and as WebAssembly in the
//! page. This crate currently holds the KV-cache term; the full model
//! (weights, compute buffers, runtime overhead, GPU catalogue) is tracked in
//! the calculator issue.
#![no_std]

/// Bytes in one GiB (2^30), the unit the runtimes print.
pub const GIB: f64 = (1u64 << 30) as f64;

/// The attention shape that determines the KV-cache size.
///
/// `kv_heads` is the number of key/value heads (smaller than the number of
/// attention heads under grouped-query attention), never the attention head count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KvShape {
    /// Transformer layers (`num_hidden_layers`).
    pub layers: u64,
    /// Key/value heads (`num_key_value_heads`).
    pub kv_heads: u64,
    /// Dimension of one head (`head_dim`, or `hidden_size / num_attention_heads`).
    pub head_dim: u64,
}

/// Bytes for one cached element, for the cache types whose size is exact
/// per element. Block-quantised types (q8_0, q4_0) arrive with the calculator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KvElement {
    /// 32-bit float.
    F32,
    /// 16-bit float (f16 or bf16).
    F16,
    /// 8-bit float (fp8 e4m3/e5m2).
    Fp8,
}

impl KvElement {
    /// Size of one element in bytes.
    pub const fn bytes(self) -> u64 {
        match self {
            KvElement::F32 => 4,
            KvElement::F16 => 2,
            KvElement::Fp8 => 1,
        }
    }
}

/// Size of the K *or* the V half of the cache for `tokens` tokens, in bytes:
/// layers × KV heads × head_dim × element size × tokens.
pub const fn kv_half_bytes(shape: KvShape, element: KvElement, tokens: u64) -> u64 {
    shape.layers * shape.kv_heads * shape.head_dim * element.bytes() * tokens
}

/// Size of the whole KV cache (K plus V) for `tokens` tokens, in bytes.
pub const fn kv_cache_bytes(shape: KvShape, element: KvElement, tokens: u64) -> u64 {
    2 * kv_half_bytes(shape, element, tokens)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: u64 = 1 << 20;

    #[test]
    fn llama2_7b_f16_kv_at_2048_is_512_mib_each() {
        // llama.cpp prints "K (f16): 512.00 MiB, V (f16): 512.00 MiB" for
        // Llama-2-7B at n_ctx 2048: 32 layers, 32 KV heads, head_dim 128.
        let shape = KvShape {
            layers: 32,
            kv_heads: 32,
            head_dim: 128,
        };
        assert_eq!(kv_half_bytes(shape, KvElement::F16, 2048), 512 * MIB);
        assert_eq!(kv_cache_bytes(shape, KvElement::F16, 2048), 1024 * MIB);
    }

    #[test]
    fn gqa_uses_kv_heads_not_attention_heads() {
        // Llama-3.1-8B: 32 layers, 8 KV heads (32 attention heads), head_dim 128.
        let shape = KvShape {
            layers: 32,
            kv_heads: 8,
            head_dim: 128,
        };
        // 128 KiB per token in f16.
        assert_eq!(kv_cache_bytes(shape, KvElement::F16, 1), 128 * 1024);
        assert_eq!(kv_cache_bytes(shape, KvElement::Fp8, 8192), 512 * MIB);
    }
}
