//! `errata size --gguf PATH`: a GGUF file's header and tensor table, read
//! without its weights, into a [`sizing::Model`] and the exact bytes of
//! every tensor.
//!
//! Written by hand: the GGUF crates on crates.io (`gguf`, `gguf-rs`) are
//! small one-author projects not written for untrusted input, and only the
//! header is needed here (fuzzed: `fuzz/fuzz_targets/gguf.rs`). The file is
//! untrusted input, so
//! every count and length is checked against what is left of the bytes
//! read and against fixed caps before anything is allocated, and arithmetic
//! on sizes is checked. The format is `docs/gguf.md` in ggml-org/ggml:
//! magic `GGUF`, version (2 or 3), tensor count, metadata count (u64s),
//! the metadata key/value pairs, then one entry per tensor (name, dims,
//! ggml type, offset into the data section), all little-endian.

use std::io::Read;
use std::path::Path;

use sizing::{Model, Profile, WeightFormat};

/// The most tensors a file may declare (DeepSeek V3 has about 1,800).
const MAX_TENSORS: u64 = 1 << 20;
/// The most metadata entries.
const MAX_METADATA: u64 = 1 << 16;
/// The longest string (a chat template is tens of KiB).
const MAX_STRING: u64 = 16 << 20;
/// The most elements an array may hold (vocabularies have ~260k tokens).
const MAX_ARRAY: u64 = 1 << 24;
/// Numeric array elements kept (per-layer head counts); longer ones are only counted.
const KEPT_ARRAY: u64 = 4096;
/// The most dimensions a tensor has (`GGML_MAX_DIMS`).
const MAX_DIMS: u32 = 4;
/// The most header bytes read before giving up.
const MAX_HEADER: usize = 1 << 30;

/// A metadata value (arrays keep their length, and their numbers when short).
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// Any unsigned integer type.
    Uint(u64),
    /// Any signed integer type.
    Int(i64),
    /// `FLOAT32` or `FLOAT64`.
    Float(f64),
    /// `BOOL`.
    Bool(bool),
    /// `STRING` (lossily decoded).
    Str(String),
    /// `ARRAY`: its length, and its integers when it has at most 4,096.
    Array {
        /// Elements.
        len: u64,
        /// The elements as integers, when they are integers and few.
        ints: Vec<u64>,
    },
}

impl Value {
    fn as_u64(&self) -> Option<u64> {
        match self {
            Value::Uint(n) => Some(*n),
            Value::Int(n) => u64::try_from(*n).ok(),
            // Per-layer values (head counts): the largest layer decides memory.
            Value::Array { ints, .. } => ints.iter().copied().max(),
            _ => None,
        }
    }
}

/// One tensor of the table.
#[derive(Debug, Clone, PartialEq)]
pub struct TensorInfo {
    /// `blk.0.attn_q.weight`...
    pub name: String,
    /// `ne[0]` (the row length) first.
    pub dims: Vec<u64>,
    /// The ggml type id.
    pub ggml_type: u32,
    /// Offset in the data section.
    pub offset: u64,
    /// Bytes, from the type's block size.
    pub bytes: u64,
}

/// The header and tensor table of a GGUF file.
#[derive(Debug, Clone, PartialEq)]
pub struct Header {
    /// 2 or 3.
    pub version: u32,
    /// Metadata, in file order.
    pub metadata: Vec<(String, Value)>,
    /// Tensors, in file order.
    pub tensors: Vec<TensorInfo>,
    /// Where the tensor data starts (after alignment padding).
    pub data_start: u64,
}

/// Why a GGUF header could not be read.
#[derive(Debug, Clone, PartialEq)]
pub enum ParseError {
    /// The bytes end before the header does: read more.
    Truncated,
    /// The header is wrong at `offset`.
    Bad {
        /// Byte offset in the file.
        offset: u64,
        /// What is wrong.
        message: String,
    },
}

/// (weights per block, bytes per block) of ggml type `t`, from `type_traits`
/// in ggml's `ggml/src/ggml.c` (ids from `enum ggml_type` in
/// `ggml/include/ggml.h`, ggml-org/llama.cpp at 007dbbf); `None` for ids
/// ggml no longer has or never had.
pub fn ggml_block(t: u32) -> Option<(u64, u64, &'static str)> {
    Some(match t {
        0 => (1, 4, "F32"),
        1 => (1, 2, "F16"),
        2 => (32, 18, "Q4_0"),
        3 => (32, 20, "Q4_1"),
        6 => (32, 22, "Q5_0"),
        7 => (32, 24, "Q5_1"),
        8 => (32, 34, "Q8_0"),
        9 => (32, 36, "Q8_1"),
        10 => (256, 84, "Q2_K"),
        11 => (256, 110, "Q3_K"),
        12 => (256, 144, "Q4_K"),
        13 => (256, 176, "Q5_K"),
        14 => (256, 210, "Q6_K"),
        15 => (256, 292, "Q8_K"),
        16 => (256, 66, "IQ2_XXS"),
        17 => (256, 74, "IQ2_XS"),
        18 => (256, 98, "IQ3_XXS"),
        19 => (256, 50, "IQ1_S"),
        20 => (32, 18, "IQ4_NL"),
        21 => (256, 110, "IQ3_S"),
        22 => (256, 82, "IQ2_S"),
        23 => (256, 136, "IQ4_XS"),
        24 => (1, 1, "I8"),
        25 => (1, 2, "I16"),
        26 => (1, 4, "I32"),
        27 => (1, 8, "I64"),
        28 => (1, 8, "F64"),
        29 => (256, 56, "IQ1_M"),
        30 => (1, 2, "BF16"),
        34 => (256, 54, "TQ1_0"),
        35 => (256, 66, "TQ2_0"),
        39 => (32, 17, "MXFP4"),
        _ => return None,
    })
}

/// A cursor over the bytes read so far.
struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Cursor<'_> {
    fn bad(&self, at: usize, message: impl Into<String>) -> ParseError {
        ParseError::Bad {
            offset: at as u64,
            message: message.into(),
        }
    }

    fn take(&mut self, n: u64) -> Result<&[u8], ParseError> {
        let n = usize::try_from(n).map_err(|_| ParseError::Truncated)?;
        let end = self.at.checked_add(n).ok_or(ParseError::Truncated)?;
        let slice = self.bytes.get(self.at..end).ok_or(ParseError::Truncated)?;
        self.at = end;
        Ok(slice)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], ParseError> {
        let mut out = [0u8; N];
        out.copy_from_slice(self.take(N as u64)?);
        Ok(out)
    }

    fn u32(&mut self) -> Result<u32, ParseError> {
        Ok(u32::from_le_bytes(self.array()?))
    }

    fn u64(&mut self) -> Result<u64, ParseError> {
        Ok(u64::from_le_bytes(self.array()?))
    }

    /// A count, refused past `cap` (`what` names it).
    fn count(&mut self, cap: u64, what: &str) -> Result<u64, ParseError> {
        let at = self.at;
        let n = self.u64()?;
        if n > cap {
            return Err(self.bad(at, format!("{what} is {n}, more than the {cap} allowed")));
        }
        Ok(n)
    }

    fn string(&mut self, what: &str) -> Result<String, ParseError> {
        let len = self.count(MAX_STRING, &format!("the length of {what}"))?;
        Ok(String::from_utf8_lossy(self.take(len)?).into_owned())
    }

    /// A value of GGUF type `t` (`gguf_type` in ggml's `gguf.h`).
    fn value(&mut self, t: u32, depth: u8) -> Result<Value, ParseError> {
        let at = self.at;
        Ok(match t {
            0 => Value::Uint(u64::from(self.array::<1>()?[0])),
            1 => Value::Int(i64::from(i8::from_le_bytes(self.array()?))),
            2 => Value::Uint(u64::from(u16::from_le_bytes(self.array()?))),
            3 => Value::Int(i64::from(i16::from_le_bytes(self.array()?))),
            4 => Value::Uint(u64::from(self.u32()?)),
            5 => Value::Int(i64::from(i32::from_le_bytes(self.array()?))),
            6 => Value::Float(f64::from(f32::from_le_bytes(self.array()?))),
            7 => Value::Bool(self.array::<1>()?[0] != 0),
            8 => Value::Str(self.string("a string value")?),
            9 if depth == 0 => {
                let element = self.u32()?;
                let len = self.count(MAX_ARRAY, "an array's length")?;
                let mut ints = Vec::new();
                for _ in 0..len {
                    match self.value(element, depth + 1)? {
                        Value::Uint(n) if len <= KEPT_ARRAY => ints.push(n),
                        Value::Int(n) if len <= KEPT_ARRAY => ints.push(n.max(0) as u64),
                        _ => {}
                    }
                }
                Value::Array { len, ints }
            }
            9 => return Err(self.bad(at, "an array of arrays")),
            10 => Value::Uint(self.u64()?),
            11 => Value::Int(i64::from_le_bytes(self.array()?)),
            12 => Value::Float(f64::from_le_bytes(self.array()?)),
            other => return Err(self.bad(at, format!("unknown metadata type {other}"))),
        })
    }
}

/// Reads the header and tensor table from the start of a GGUF file.
/// `Err(Truncated)` means the bytes end too early: read more and retry.
pub fn parse(bytes: &[u8]) -> Result<Header, ParseError> {
    let mut c = Cursor { bytes, at: 0 };
    if c.take(4)? != b"GGUF" {
        return Err(c.bad(0, "not a GGUF file (it does not start with `GGUF`)"));
    }
    let version = c.u32()?;
    if !(2..=3).contains(&version) {
        return Err(c.bad(
            4,
            format!("GGUF version {version} is not supported (2 and 3 are)"),
        ));
    }
    let tensor_count = c.count(MAX_TENSORS, "the tensor count")?;
    let metadata_count = c.count(MAX_METADATA, "the metadata count")?;
    let mut metadata = Vec::new();
    for _ in 0..metadata_count {
        let key = c.string("a metadata key")?;
        let t = c.u32()?;
        let value = c.value(t, 0)?;
        metadata.push((key, value));
    }
    let alignment = metadata
        .iter()
        .find(|(k, _)| k == "general.alignment")
        .map(|(_, v)| v.as_u64().unwrap_or(0))
        .unwrap_or(32);
    if alignment == 0 || !alignment.is_power_of_two() || alignment > 1 << 20 {
        return Err(c.bad(
            0,
            format!("general.alignment {alignment} is not a power of two"),
        ));
    }
    let mut tensors = Vec::new();
    let mut names = std::collections::HashSet::new();
    for i in 0..tensor_count {
        let at = c.at;
        let name = c.string("a tensor name")?;
        // llama.cpp's loader refuses a file that names a tensor twice.
        if !names.insert(name.clone()) {
            return Err(c.bad(at, format!("tensor `{name}` is named twice")));
        }
        let n_dims = c.u32()?;
        if n_dims == 0 || n_dims > MAX_DIMS {
            return Err(c.bad(
                at,
                format!("tensor {i} `{name}` has {n_dims} dimensions (1 to 4 allowed)"),
            ));
        }
        let mut dims = Vec::new();
        for _ in 0..n_dims {
            dims.push(c.u64()?);
        }
        let ggml_type = c.u32()?;
        let offset = c.u64()?;
        let Some((block, block_bytes, type_name)) = ggml_block(ggml_type) else {
            return Err(c.bad(
                at,
                format!("tensor `{name}` has unknown ggml type {ggml_type}"),
            ));
        };
        let elements = dims
            .iter()
            .try_fold(1u64, |n, &d| n.checked_mul(d))
            .filter(|&n| n > 0 && n < 1 << 50)
            .ok_or_else(|| {
                c.bad(
                    at,
                    format!("tensor `{name}` has impossible dimensions {dims:?}"),
                )
            })?;
        if dims[0] % block != 0 {
            return Err(c.bad(
                at,
                format!(
                    "tensor `{name}`: a row of {} is not a whole number of {type_name} blocks of {block}",
                    dims[0]
                ),
            ));
        }
        if offset % alignment != 0 {
            return Err(c.bad(
                at,
                format!("tensor `{name}`'s offset {offset} is not aligned to {alignment}"),
            ));
        }
        tensors.push(TensorInfo {
            name,
            dims,
            ggml_type,
            offset,
            bytes: elements / block * block_bytes,
        });
    }
    let data_start = (c.at as u64).next_multiple_of(alignment);
    Ok(Header {
        version,
        metadata,
        tensors,
        data_start,
    })
}

/// A GGUF file read into what the calculator needs.
#[derive(Debug, Clone, PartialEq)]
pub struct ReadGguf {
    /// `general.architecture`.
    pub architecture: String,
    /// The architecture.
    pub model: Model,
    /// The file's weights, tensor by tensor, summed as the runtimes place them.
    pub profile: Profile,
    /// The weight format named by `general.file_type`, or the one closest in bits.
    pub format: WeightFormat,
    /// `{arch}.context_length`.
    pub max_context: Option<u64>,
}

/// A problem with a GGUF file: where in it, and what.
#[derive(Debug, Clone, PartialEq)]
pub struct GgufError {
    /// The file.
    pub path: std::path::PathBuf,
    /// Byte offset, when the problem is at one place.
    pub offset: Option<u64>,
    /// What is wrong.
    pub message: String,
}

impl std::fmt::Display for GgufError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.offset {
            Some(at) => write!(
                f,
                "{}: byte {at}: error: {}",
                self.path.display(),
                self.message
            ),
            None => write!(f, "{}: error: {}", self.path.display(), self.message),
        }
    }
}

/// Reads the header of the GGUF file at `path`: the first MiB, then twice
/// as much until the tensor table is complete (never the weights).
pub fn read(path: &Path) -> Result<ReadGguf, GgufError> {
    let error = |offset, message: String| GgufError {
        path: path.to_path_buf(),
        offset,
        message,
    };
    let file = std::fs::File::open(path).map_err(|e| error(None, format!("cannot read: {e}")))?;
    let len = file
        .metadata()
        .map_err(|e| error(None, format!("cannot read: {e}")))?
        .len();
    let mut bytes = Vec::new();
    let mut want = 1usize << 20;
    let header = loop {
        let mut limited = (&file).take((want - bytes.len()) as u64);
        limited
            .read_to_end(&mut bytes)
            .map_err(|e| error(None, format!("cannot read: {e}")))?;
        match parse(&bytes) {
            Ok(header) => break header,
            Err(ParseError::Bad { offset, message }) => return Err(error(Some(offset), message)),
            Err(ParseError::Truncated) if (bytes.len() as u64) < len && want < MAX_HEADER => {
                want *= 2;
            }
            Err(ParseError::Truncated) => {
                return Err(error(
                    Some(bytes.len() as u64),
                    if (bytes.len() as u64) < len {
                        "the header is larger than 1 GiB".into()
                    } else {
                        "the file ends inside its header: it is truncated (an incomplete download?)"
                            .into()
                    },
                ));
            }
        }
    };
    // Every tensor must lie inside the file: a short file is a partial download.
    for t in &header.tensors {
        let end = header
            .data_start
            .checked_add(t.offset)
            .and_then(|n| n.checked_add(t.bytes));
        if end.is_none_or(|end| end > len) {
            return Err(error(
                None,
                format!(
                    "tensor `{}` ends past the end of the file ({len} bytes): the file is truncated (an incomplete download?)",
                    t.name
                ),
            ));
        }
    }
    model_of(&header).map_err(|message| error(None, message))
}

/// The model a header describes, with its exact weights.
pub fn model_of(h: &Header) -> Result<ReadGguf, String> {
    let get = |key: &str| h.metadata.iter().find(|(k, _)| k == key).map(|(_, v)| v);
    let arch = match get("general.architecture") {
        Some(Value::Str(s)) => s.clone(),
        _ => return Err("no `general.architecture` in the metadata".into()),
    };
    let num = |key: &str| get(&format!("{arch}.{key}")).and_then(Value::as_u64);
    let need = |key: &str| {
        num(key)
            .filter(|&n| n > 0)
            .ok_or_else(|| format!("no `{arch}.{key}` in the metadata"))
    };
    let layers = need("block_count")?;
    let hidden = need("embedding_length")?;
    let heads = need("attention.head_count")?;
    if layers > 1 << 16 || hidden > 1 << 24 || heads > 1 << 16 {
        return Err(format!("`{arch}` metadata gives impossible sizes"));
    }
    let embeddings = h.tensors.iter().find(|t| t.name == "token_embd.weight");
    let vocab = num("vocab_size")
        .or_else(|| match get("tokenizer.ggml.tokens") {
            Some(Value::Array { len, .. }) => Some(*len),
            _ => None,
        })
        .or_else(|| embeddings.and_then(|t| t.dims.get(1).copied()))
        .filter(|&n| n > 0)
        .ok_or("no vocabulary size (no `tokenizer.ggml.tokens` and no `token_embd.weight`)")?;
    let params: u64 = h
        .tensors
        .iter()
        .map(|t| t.dims.iter().product::<u64>())
        .fold(0u64, u64::saturating_add);
    let mut model = Model {
        kv_heads: num("attention.head_count_kv").unwrap_or(heads).max(1),
        head_dim: num("attention.key_length").unwrap_or(hidden / heads),
        tied_embeddings: !h.tensors.iter().any(|t| t.name == "output.weight"),
        intermediate: num("feed_forward_length").unwrap_or(0),
        ..Model::dense(params as f64, layers, hidden, heads, vocab)
    };
    let experts = num("expert_count").unwrap_or(0);
    if experts > 1 {
        model.experts = experts;
        model.experts_used = num("expert_used_count").unwrap_or(0).clamp(1, experts);
        model.expert_intermediate = num("expert_feed_forward_length").unwrap_or(model.intermediate);
        model.shared_intermediate = num("expert_shared_feed_forward_length")
            .unwrap_or_else(|| num("expert_shared_count").unwrap_or(0) * model.expert_intermediate);
        model.dense_layers = num("leading_dense_block_count").unwrap_or(0).min(layers);
    }
    // Sliding-window layers, as llama.cpp sets them for each architecture.
    if let Some(window) = num("attention.sliding_window").filter(|&w| w > 0) {
        let sliding = match arch.as_str() {
            "gemma2" | "gpt-oss" => layers / 2,
            "gemma3" => layers - layers / 6,
            _ => 0,
        };
        if sliding > 0 {
            model.sliding_window = window;
            model.sliding_layers = sliding;
        }
    }
    // DeepSeek's latent attention caches kv_lora_rank + the rope dimensions.
    if let (Some(rank), Some(rope)) = (num("attention.kv_lora_rank"), num("rope.dimension_count")) {
        model.kv_heads = 1;
        model.head_dim = (rank + rope).div_ceil(2);
    }
    let profile = profile_of(h, &model);
    let format = file_format(
        get("general.file_type").and_then(Value::as_u64),
        params as f64,
        &profile,
    );
    Ok(ReadGguf {
        max_context: num("context_length"),
        architecture: arch,
        model,
        profile,
        format,
    })
}

/// The file's bytes placed as the runtimes place them: per layer, the
/// token embeddings, the head and everything outside the layers, and the
/// small tensors tensor parallelism replicates (norms, routers).
fn profile_of(h: &Header, model: &Model) -> Profile {
    let mut p = Profile {
        layers: vec![0.0; model.layers as usize],
        embeddings: 0.0,
        head: 0.0,
        replicated: 0.0,
        total: 0.0,
    };
    for t in &h.tensors {
        let bytes = t.bytes as f64;
        p.total += bytes;
        if t.name.contains("norm") || t.name.contains("ffn_gate_inp") {
            p.replicated += bytes;
        }
        let layer = t
            .name
            .strip_prefix("blk.")
            .and_then(|rest| rest.split('.').next())
            .and_then(|n| n.parse::<usize>().ok());
        match layer {
            Some(i) if i < p.layers.len() => p.layers[i] += bytes,
            _ if t.name.starts_with("token_embd.") => p.embeddings += bytes,
            _ => p.head += bytes,
        }
    }
    p
}

/// The weight format `general.file_type` names (`enum llama_ftype` in
/// llama.cpp's `include/llama.h`); for types the calculator does not list
/// (IQ2_XXS...), and for a file that names none, the GGUF format closest
/// in bits per weight, unquantized F16 and F32 included.
fn file_format(file_type: Option<u64>, weights: f64, profile: &Profile) -> WeightFormat {
    use WeightFormat as F;
    let named = match file_type {
        Some(0) => Some(F::Fp32),
        Some(1) => Some(F::Fp16),
        Some(2) => Some(F::Q4_0),
        Some(7) => Some(F::Q8_0),
        Some(8) => Some(F::Q5_0),
        Some(10) => Some(F::Q2K),
        Some(12) => Some(F::Q3KM),
        Some(13) => Some(F::Q3KL),
        Some(14) => Some(F::Q4KS),
        Some(15) => Some(F::Q4KM),
        Some(16) => Some(F::Q5KS),
        Some(17) => Some(F::Q5KM),
        Some(18) => Some(F::Q6K),
        Some(30) => Some(F::Iq4Xs),
        Some(32) => Some(F::Bf16),
        Some(38) => Some(F::Mxfp4),
        _ => None,
    };
    named.unwrap_or_else(|| {
        // Bits per weight of the file's own tensors.
        let bits = profile.total * 8.0 / weights.max(1.0);
        let mut best = F::Q4KM;
        for &f in <F as sizing::Choice>::ALL {
            let stored = f.is_gguf() || matches!(f, F::Fp16 | F::Fp32);
            if stored && (f.rank() - bits).abs() < (best.rank() - bits).abs() {
                best = f;
            }
        }
        best
    })
}
