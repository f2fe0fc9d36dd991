//! Weight formats, modelled tensor class by tensor class.
//!
//! A GGUF "Q4_K_M" file is a mix: llama.cpp's quantiser picks a type for
//! each tensor from its class, its layer and the model. [`gguf_type`]
//! follows `llama_tensor_get_type_impl` and `tensor_type_fallback` in
//! llama.cpp's `src/llama-quant.cpp` (ggml-org/llama.cpp at commit
//! 007dbbf3fd17eefe9b47fee45f48f7ba5e62b714), for the file types offered
//! here, without an importance matrix. Block sizes are ggml's
//! (`ggml/src/ggml-common.h`): Q4_K is 144 bytes per 256 weights, Q8_0 is
//! 34 bytes per 32.
//!
//! Checkpoints for PyTorch and vLLM (FP8, INT8, AWQ, GPTQ) quantise the
//! linear layers and keep the embeddings, the LM head, the router and the
//! norms in 16 bits. gpt-oss's MXFP4 checkpoint quantises only the experts.

use crate::model::{Class, Model, Tensor};

/// A ggml tensor type: bytes per block of weights.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GgmlType {
    /// 32-bit float.
    F32,
    /// 16-bit float (or bfloat16).
    F16,
    /// `block_q8_0`: fp16 scale + 32 int8.
    Q8_0,
    /// `block_q6_K`.
    Q6K,
    /// `block_q5_K`.
    Q5K,
    /// `block_q4_K`.
    Q4K,
    /// `block_q3_K`.
    Q3K,
    /// `block_q2_K`.
    Q2K,
    /// `block_q5_0`.
    Q5_0,
    /// `block_q5_1`.
    Q5_1,
    /// `block_q4_0`.
    Q4_0,
    /// `block_iq4_xs`.
    Iq4Xs,
    /// `block_iq4_nl`.
    Iq4Nl,
    /// `block_mxfp4`: an e8m0 scale + 32 fp4 weights.
    Mxfp4,
}

impl GgmlType {
    /// (bytes per block, weights per block), from `ggml-common.h`.
    pub fn block(self) -> (u64, u64) {
        match self {
            GgmlType::F32 => (4, 1),
            GgmlType::F16 => (2, 1),
            GgmlType::Q8_0 => (34, 32),
            GgmlType::Q6K => (210, 256),
            GgmlType::Q5K => (176, 256),
            GgmlType::Q4K => (144, 256),
            GgmlType::Q3K => (110, 256),
            GgmlType::Q2K => (84, 256),
            GgmlType::Q5_0 => (22, 32),
            GgmlType::Q5_1 => (24, 32),
            GgmlType::Q4_0 => (18, 32),
            GgmlType::Iq4Xs => (136, 256),
            GgmlType::Iq4Nl => (18, 32),
            GgmlType::Mxfp4 => (17, 32),
        }
    }

    /// Bytes per weight.
    pub fn bytes_per_weight(self) -> f64 {
        let (bytes, weights) = self.block();
        bytes as f64 / weights as f64
    }

    /// What llama.cpp falls back to when a row is not a whole number of
    /// blocks (`tensor_type_fallback`).
    fn fallback(self, ncols: u64) -> GgmlType {
        let fits = |t: GgmlType| ncols.is_multiple_of(t.block().1);
        if fits(self) {
            return self;
        }
        let next = match self {
            GgmlType::Iq4Xs => GgmlType::Iq4Nl,
            GgmlType::Q2K | GgmlType::Q3K => GgmlType::Q4_0,
            GgmlType::Q4K => GgmlType::Q5_0,
            GgmlType::Q5K => GgmlType::Q5_1,
            GgmlType::Q6K => GgmlType::Q8_0,
            other => other,
        };
        if fits(next) { next } else { GgmlType::F16 }
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
    /// MXFP4 experts, everything else bf16 (gpt-oss as released).
    Mxfp4,
    /// GGUF Q8_0.
    Q8_0,
    /// GGUF Q6_K.
    Q6K,
    /// GGUF Q5_K_M.
    Q5KM,
    /// GGUF Q5_K_S.
    Q5KS,
    /// GGUF Q5_0.
    Q5_0,
    /// GGUF Q4_K_M.
    Q4KM,
    /// GGUF Q4_K_S.
    Q4KS,
    /// GGUF Q4_0.
    Q4_0,
    /// GGUF IQ4_XS.
    Iq4Xs,
    /// GGUF Q3_K_L.
    Q3KL,
    /// GGUF Q3_K_M.
    Q3KM,
    /// GGUF Q2_K.
    Q2K,
}

/// Every weight format, largest first.
pub(crate) const WEIGHT_FORMATS: [WeightFormat; 20] = [
    WeightFormat::Fp32,
    WeightFormat::Bf16,
    WeightFormat::Fp16,
    WeightFormat::Q8_0,
    WeightFormat::Fp8,
    WeightFormat::Int8,
    WeightFormat::Q6K,
    WeightFormat::Q5KM,
    WeightFormat::Q5KS,
    WeightFormat::Q5_0,
    WeightFormat::Q4KM,
    WeightFormat::Q4KS,
    WeightFormat::Q4_0,
    WeightFormat::Iq4Xs,
    WeightFormat::Awq4,
    WeightFormat::Gptq4,
    WeightFormat::Mxfp4,
    WeightFormat::Q3KL,
    WeightFormat::Q3KM,
    WeightFormat::Q2K,
];

impl crate::choice::Choice for WeightFormat {
    const ALL: &'static [WeightFormat] = &WEIGHT_FORMATS;
    const WHAT: &'static str = "weight format";

    fn name(self) -> &'static str {
        match self {
            WeightFormat::Fp32 => "fp32",
            WeightFormat::Bf16 => "bf16",
            WeightFormat::Fp16 => "fp16",
            WeightFormat::Fp8 => "fp8",
            WeightFormat::Int8 => "int8",
            WeightFormat::Awq4 => "awq",
            WeightFormat::Gptq4 => "gptq",
            WeightFormat::Mxfp4 => "mxfp4",
            WeightFormat::Q8_0 => "q8_0",
            WeightFormat::Q6K => "q6_k",
            WeightFormat::Q5KM => "q5_k_m",
            WeightFormat::Q5KS => "q5_k_s",
            WeightFormat::Q5_0 => "q5_0",
            WeightFormat::Q4KM => "q4_k_m",
            WeightFormat::Q4KS => "q4_k_s",
            WeightFormat::Q4_0 => "q4_0",
            WeightFormat::Iq4Xs => "iq4_xs",
            WeightFormat::Q3KL => "q3_k_l",
            WeightFormat::Q3KM => "q3_k_m",
            WeightFormat::Q2K => "q2_k",
        }
    }

    fn aliases(self) -> &'static [&'static str] {
        match self {
            WeightFormat::Fp32 => &["f32", "float32"],
            WeightFormat::Fp16 => &["f16", "float16", "half"],
            WeightFormat::Bf16 => &["bfloat16"],
            WeightFormat::Awq4 => &["awq4", "awq-4bit"],
            WeightFormat::Gptq4 => &["gptq4", "gptq-4bit"],
            WeightFormat::Mxfp4 => &["mxfp4_moe"],
            WeightFormat::Q4KM => &["q4_k"],
            WeightFormat::Q5KM => &["q5_k"],
            WeightFormat::Q3KM => &["q3_k"],
            _ => &[],
        }
    }
}

impl WeightFormat {
    /// True for GGUF formats (run by llama.cpp and Ollama).
    pub fn is_gguf(self) -> bool {
        self.base().is_some()
    }

    /// The GGUF file type's default tensor type (`llama_ftype_get_default_type`).
    fn base(self) -> Option<GgmlType> {
        Some(match self {
            WeightFormat::Q8_0 => GgmlType::Q8_0,
            WeightFormat::Q6K => GgmlType::Q6K,
            WeightFormat::Q5KM | WeightFormat::Q5KS => GgmlType::Q5K,
            WeightFormat::Q5_0 => GgmlType::Q5_0,
            WeightFormat::Q4KM | WeightFormat::Q4KS => GgmlType::Q4K,
            WeightFormat::Q4_0 => GgmlType::Q4_0,
            WeightFormat::Iq4Xs => GgmlType::Iq4Xs,
            WeightFormat::Q3KL | WeightFormat::Q3KM => GgmlType::Q3K,
            WeightFormat::Q2K => GgmlType::Q2K,
            _ => return None,
        })
    }

    /// Bytes per weight of the linear layers (the bulk of a model).
    fn linear_bytes(self) -> f64 {
        match self {
            WeightFormat::Fp32 => 4.0,
            WeightFormat::Bf16 | WeightFormat::Fp16 => 2.0,
            WeightFormat::Fp8 | WeightFormat::Int8 => 1.0,
            // 4-bit weights + an fp16 scale and a 4-bit zero point per group of 128.
            WeightFormat::Awq4 | WeightFormat::Gptq4 => (4.0 + (16.0 + 4.0) / 128.0) / 8.0,
            WeightFormat::Mxfp4 => 2.0,
            other => other.base().map_or(2.0, GgmlType::bytes_per_weight),
        }
    }

    /// Average bits per weight over a whole model.
    pub fn bits_per_weight(self, model: &Model) -> f64 {
        weight_bytes(model, self) * 8.0 / model.total_params().max(1.0)
    }

    /// A rough size rank for ordering formats without a model (bits per
    /// weight of the linear layers).
    pub fn rank(self) -> f64 {
        self.linear_bytes() * 8.0
    }
}

/// llama.cpp's `use_more_bits`: the first and last eighth of the layers and
/// every third one between get more bits in the `_M` mixes.
fn use_more_bits(i: u64, n: u64) -> bool {
    i < n / 8 || i >= 7 * n / 8 || (i - n / 8) % 3 == 2
}

/// The ggml type llama.cpp's quantiser gives `t` in a `format` file of
/// `model` (`llama_tensor_get_type_impl`, then `tensor_type_fallback`).
pub fn gguf_type(format: WeightFormat, model: &Model, t: &Tensor) -> GgmlType {
    use GgmlType as G;
    use WeightFormat as F;
    let Some(base) = format.base() else {
        return G::F16;
    };
    let (i, n) = (t.layer, model.layers);
    let eight_experts = model.experts == 8;
    let gqa = model.heads / model.kv_heads.max(1);
    let chosen = match t.class {
        Class::Norm | Class::Router => return G::F32,
        // The head (and tied embeddings, which serve as the head) get Q6_K,
        // or Q8_0 when the row does not divide into Q6_K blocks.
        Class::Output => output_type(base, t),
        Class::TokenEmbd if model.tied_embeddings => output_type(base, t),
        Class::TokenEmbd | Class::AttnQ | Class::FfnGateUp | Class::ExpertGateUp => base,
        Class::AttnV => {
            let mut v = match format {
                F::Q2K if gqa >= 4 => G::Q4K,
                F::Q2K => G::Q3K,
                F::Q3KM if i < 2 => G::Q5K,
                F::Q3KM => G::Q4K,
                F::Q3KL => G::Q5K,
                F::Iq4Xs if gqa >= 4 => G::Q5K,
                F::Q4KM | F::Q5KM if use_more_bits(i, n) => G::Q6K,
                F::Q4KS if i < 4 => G::Q5K,
                _ => base,
            };
            // LLM_TYPE_70B (80 layers): attn_v is 8× smaller than attn_q.
            if n == 80 && matches!(v, G::Q3K | G::Q4K) {
                v = G::Q5K;
            }
            if eight_experts { G::Q8_0 } else { v }
        }
        Class::AttnK if eight_experts => G::Q8_0,
        Class::AttnK => base,
        Class::FfnDown | Class::ExpertDown => match format {
            F::Q2K => G::Q3K,
            F::Q3KM if i < n / 16 => G::Q5K,
            F::Q3KM => G::Q4K,
            F::Q3KL => G::Q5K,
            F::Q4KM | F::Q5KM if use_more_bits(i, n) => G::Q6K,
            F::Iq4Xs | F::Q4KS if i < n / 8 => G::Q5K,
            _ => base,
        },
        Class::AttnOutput if eight_experts => match format {
            F::Q2K | F::Q3KM | F::Q4KS | F::Q4KM | F::Iq4Xs => G::Q5K,
            _ => base,
        },
        Class::AttnOutput => match format {
            F::Q2K => G::Q3K,
            F::Q3KM => G::Q4K,
            F::Q3KL => G::Q5K,
            _ => base,
        },
    };
    chosen.fallback(t.ncols)
}

fn output_type(base: GgmlType, t: &Tensor) -> GgmlType {
    if !t.ncols.is_multiple_of(base.block().1) || base == GgmlType::Q8_0 {
        GgmlType::Q8_0
    } else {
        GgmlType::Q6K
    }
}

/// Bytes per weight of tensor `t` in `format`.
pub fn tensor_bytes_per_weight(format: WeightFormat, model: &Model, t: &Tensor) -> f64 {
    if format.is_gguf() {
        return gguf_type(format, model, t).bytes_per_weight();
    }
    let sixteen = if format == WeightFormat::Fp32 {
        4.0
    } else {
        2.0
    };
    match t.class {
        Class::TokenEmbd | Class::Output | Class::Router | Class::Norm => sixteen,
        Class::ExpertGateUp | Class::ExpertDown if format == WeightFormat::Mxfp4 => {
            GgmlType::Mxfp4.bytes_per_weight()
        }
        _ => format.linear_bytes(),
    }
}

/// Bytes of the weights in `format`, summed tensor by tensor.
pub fn weight_bytes(model: &Model, format: WeightFormat) -> f64 {
    model
        .tensors()
        .iter()
        .map(|t| t.params * tensor_bytes_per_weight(format, model, t))
        .sum()
}

/// A model's weights in one format, summed once: per layer, the token
/// embeddings, the head (with the final norm), the small tensors every GPU
/// keeps whole (norms, routers), and the total.
#[derive(Debug, Clone, PartialEq)]
pub struct Profile {
    /// Bytes of each layer.
    pub layers: alloc::vec::Vec<f64>,
    /// Bytes of the token embeddings.
    pub embeddings: f64,
    /// Bytes of the head and everything outside the layers but the embeddings.
    pub head: f64,
    /// Bytes of norms and routers (replicated under tensor parallelism).
    pub replicated: f64,
    /// Bytes of everything.
    pub total: f64,
}

impl Profile {
    /// Walks `model`'s tensors once.
    pub fn new(model: &Model, format: WeightFormat) -> Profile {
        let mut p = Profile {
            layers: alloc::vec![0.0; model.layers as usize],
            embeddings: 0.0,
            head: 0.0,
            replicated: 0.0,
            total: 0.0,
        };
        for t in model.tensors() {
            let bytes = t.params * tensor_bytes_per_weight(format, model, &t);
            p.total += bytes;
            if matches!(t.class, Class::Norm | Class::Router) {
                p.replicated += bytes;
            }
            match t.class {
                Class::TokenEmbd => p.embeddings += bytes,
                Class::Output => p.head += bytes,
                _ if t.layer < model.layers => p.layers[t.layer as usize] += bytes,
                _ => p.head += bytes,
            }
        }
        p
    }
}

/// The cached profiles: (format, model, profile).
type Profiles = alloc::vec::Vec<(WeightFormat, Model, alloc::rc::Rc<Profile>)>;

/// Profiles already worked out for one request, shared by the copies of an
/// [`crate::Input`] that suggestions and searches make.
#[derive(Clone, Default)]
pub struct ProfileCache(alloc::rc::Rc<core::cell::RefCell<Profiles>>);

impl ProfileCache {
    /// The profile of `model` in `format`, computed at most once.
    pub fn get(&self, model: &Model, format: WeightFormat) -> alloc::rc::Rc<Profile> {
        if let Some((_, _, p)) = self
            .0
            .borrow()
            .iter()
            .find(|(f, m, _)| *f == format && m == model)
        {
            return p.clone();
        }
        let p = alloc::rc::Rc::new(Profile::new(model, format));
        self.0.borrow_mut().push((format, model.clone(), p.clone()));
        p
    }
}

impl ProfileCache {
    /// Records `profile` as `model`'s weights in `format`: what a model
    /// file measured, tensor by tensor, instead of what the shapes imply.
    pub fn seed(&self, model: &Model, format: WeightFormat, profile: Profile) {
        let mut all = self.0.borrow_mut();
        all.retain(|(f, m, _)| !(*f == format && m == model));
        all.push((format, model.clone(), alloc::rc::Rc::new(profile)));
    }
}

impl PartialEq for ProfileCache {
    /// A cache never makes two inputs differ.
    fn eq(&self, _: &ProfileCache) -> bool {
        true
    }
}

impl core::fmt::Debug for ProfileCache {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("ProfileCache")
    }
}
