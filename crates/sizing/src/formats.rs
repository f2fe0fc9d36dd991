//! Weight formats and their bits per weight.

use crate::GIB;
use crate::model::Model;

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
    pub(crate) fn keeps_embeddings_16bit(self) -> bool {
        matches!(
            self,
            WeightFormat::Fp8 | WeightFormat::Int8 | WeightFormat::Awq4 | WeightFormat::Gptq4
        )
    }
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
