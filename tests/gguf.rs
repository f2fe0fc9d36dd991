//! `errata size --gguf`: a GGUF file this test writes itself (header,
//! tensor table and zeroed data), read back without its weights; bad files
//! give errors that say where and what.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use errata::calculator::gguf;

#[path = "support/errata_size.rs"]
mod errata_size;
use errata_size::{errata_size, size_json};

/// Builds GGUF bytes field by field (little-endian, version 3).
#[derive(Default)]
struct Writer {
    metadata: Vec<u8>,
    metadata_count: u64,
    tensors: Vec<u8>,
    tensor_count: u64,
    data_len: u64,
}

fn string(out: &mut Vec<u8>, s: &str) {
    out.extend((s.len() as u64).to_le_bytes());
    out.extend(s.as_bytes());
}

impl Writer {
    fn u32(&mut self, key: &str, value: u32) -> &mut Self {
        string(&mut self.metadata, key);
        self.metadata.extend(4u32.to_le_bytes());
        self.metadata.extend(value.to_le_bytes());
        self.metadata_count += 1;
        self
    }

    fn str(&mut self, key: &str, value: &str) -> &mut Self {
        string(&mut self.metadata, key);
        self.metadata.extend(8u32.to_le_bytes());
        string(&mut self.metadata, value);
        self.metadata_count += 1;
        self
    }

    fn tokens(&mut self, n: usize) -> &mut Self {
        string(&mut self.metadata, "tokenizer.ggml.tokens");
        self.metadata.extend(9u32.to_le_bytes());
        self.metadata.extend(8u32.to_le_bytes());
        self.metadata.extend((n as u64).to_le_bytes());
        for i in 0..n {
            string(&mut self.metadata, &format!("tok{i}"));
        }
        self.metadata_count += 1;
        self
    }

    /// A tensor of ggml type `t` whose data takes `bytes`.
    fn tensor(&mut self, name: &str, dims: &[u64], t: u32, bytes: u64) -> &mut Self {
        string(&mut self.tensors, name);
        self.tensors.extend((dims.len() as u32).to_le_bytes());
        for d in dims {
            self.tensors.extend(d.to_le_bytes());
        }
        self.tensors.extend(t.to_le_bytes());
        self.tensors.extend(self.data_len.to_le_bytes());
        self.data_len = (self.data_len + bytes).next_multiple_of(32);
        self.tensor_count += 1;
        self
    }

    fn bytes(&self) -> Vec<u8> {
        let mut out = b"GGUF".to_vec();
        out.extend(3u32.to_le_bytes());
        out.extend(self.tensor_count.to_le_bytes());
        out.extend(self.metadata_count.to_le_bytes());
        out.extend(&self.metadata);
        out.extend(&self.tensors);
        out.resize(out.len().next_multiple_of(32), 0);
        out.resize(out.len() + self.data_len as usize, 0);
        out
    }
}

// ggml block sizes (ggml/src/ggml.c type_traits): bytes per 256 weights.
const Q4_K: (u32, u64) = (12, 144);
const Q6_K: (u32, u64) = (14, 210);
const F32: u32 = 0;

/// A two-layer Llama-shaped model in Q4_K_M's mix, and its exact weight bytes.
fn tiny_llama() -> (Writer, u64) {
    let (h, ff, vocab, kv) = (256u64, 512u64, 100u64, 128u64);
    let mut w = Writer::default();
    w.str("general.architecture", "llama")
        .u32("general.file_type", 15)
        .u32("llama.block_count", 2)
        .u32("llama.context_length", 8192)
        .u32("llama.embedding_length", h as u32)
        .u32("llama.feed_forward_length", ff as u32)
        .u32("llama.attention.head_count", 4)
        .u32("llama.attention.head_count_kv", 2)
        .tokens(vocab as usize);
    let mut total = 0;
    let add = |w: &mut Writer, name: &str, dims: &[u64], (t, per256): (u32, u64)| {
        let bytes = dims.iter().product::<u64>() / 256 * per256;
        w.tensor(name, dims, t, bytes);
        bytes
    };
    total += add(&mut w, "token_embd.weight", &[h, vocab], Q4_K);
    for i in 0..2 {
        total += add(&mut w, &format!("blk.{i}.attn_q.weight"), &[h, h], Q4_K);
        total += add(&mut w, &format!("blk.{i}.attn_k.weight"), &[h, kv], Q4_K);
        total += add(&mut w, &format!("blk.{i}.attn_v.weight"), &[h, kv], Q6_K);
        total += add(
            &mut w,
            &format!("blk.{i}.attn_output.weight"),
            &[h, h],
            Q4_K,
        );
        total += add(&mut w, &format!("blk.{i}.ffn_gate.weight"), &[h, ff], Q4_K);
        total += add(&mut w, &format!("blk.{i}.ffn_up.weight"), &[h, ff], Q4_K);
        total += add(&mut w, &format!("blk.{i}.ffn_down.weight"), &[ff, h], Q6_K);
        for norm in ["attn_norm", "ffn_norm"] {
            w.tensor(&format!("blk.{i}.{norm}.weight"), &[h], F32, h * 4);
            total += h * 4;
        }
    }
    w.tensor("output_norm.weight", &[h], F32, h * 4);
    total += h * 4;
    total += add(&mut w, "output.weight", &[h, vocab], Q6_K);
    (w, total)
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

#[test]
fn a_written_gguf_reads_back_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let (w, total) = tiny_llama();
    let path = write(dir.path(), "tiny.gguf", &w.bytes());
    let read = gguf::read(&path).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(read.architecture, "llama");
    assert_eq!(read.format, sizing::WeightFormat::Q4KM);
    assert_eq!(read.max_context, Some(8192));
    let m = &read.model;
    assert_eq!(
        (m.layers, m.hidden, m.heads, m.kv_heads, m.head_dim, m.vocab),
        (2, 256, 4, 2, 64, 100)
    );
    assert!(!m.tied_embeddings);
    // The weight size is the exact sum of the tensors' sizes.
    assert_eq!(read.profile.total, total as f64);
    assert_eq!(read.profile.embeddings, (256 * 100 / 256 * 144) as f64);
    // Through the command line: the same bytes, placed by the runtime.
    let json = size_json([
        OsStr::new("--runtime"),
        OsStr::new("llama.cpp"),
        OsStr::new("--gguf"),
        path.as_os_str(),
    ])
    .unwrap();
    assert_eq!(json["weights"], "q4_k_m");
    assert_eq!(json["model_gib"], 0.0);
    let bits = json["bits_per_weight"].as_f64().unwrap();
    let params =
        (256 * 100 * 2 + 2 * (256 * 256 * 2 + 256 * 128 * 2 + 256 * 512 * 3 + 512) + 256) as f64;
    assert!((bits - total as f64 * 8.0 / params).abs() < 0.01, "{bits}");
}

#[test]
fn only_the_header_is_read() {
    // A file whose data section is 64 MiB of zeros reads as fast as one
    // without: the tensor table says where the data is, and it is not read.
    let dir = tempfile::tempdir().unwrap();
    let (w, _) = tiny_llama();
    let mut bytes = w.bytes();
    let header_len = bytes.len() - w.data_len as usize;
    bytes.truncate(header_len);
    let path = write(dir.path(), "big.gguf", &bytes);
    let file = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    file.set_len((header_len + (64 << 20)) as u64).unwrap();
    assert!(gguf::read(&path).is_ok());
}

#[test]
fn bad_gguf_files_say_where_and_what() {
    let dir = tempfile::tempdir().unwrap();
    let (w, _) = tiny_llama();
    let good = w.bytes();
    let check = |name: &str, bytes: &[u8], expected: &str| {
        let path = write(dir.path(), name, bytes);
        let error = gguf::read(&path).unwrap_err().to_string();
        let shown = path.display().to_string();
        assert!(error.starts_with(&shown), "{error}");
        assert!(error.contains(expected), "{name}: {error}");
        // And the command line prints it with exit code 1.
        let out = errata_size([OsStr::new("--gguf"), path.as_os_str()]);
        assert_eq!(out.status.code(), Some(1));
        assert!(String::from_utf8_lossy(&out.stderr).contains(expected));
    };
    check(
        "magic.gguf",
        b"GGML\x03\0\0\0",
        "byte 0: error: not a GGUF file",
    );
    let mut version = good.clone();
    version[4] = 9;
    check(
        "version.gguf",
        &version,
        "byte 4: error: GGUF version 9 is not supported",
    );
    // A tensor count of 2^40: refused before anything is allocated.
    let mut count = good.clone();
    count[8..16].copy_from_slice(&(1u64 << 40).to_le_bytes());
    check(
        "count.gguf",
        &count,
        "byte 8: error: the tensor count is 1099511627776",
    );
    // A string claiming 2^62 bytes.
    let mut long = good.clone();
    long[24..32].copy_from_slice(&(1u64 << 62).to_le_bytes());
    check(
        "string.gguf",
        &long,
        "byte 24: error: the length of a metadata key is",
    );
    // The header cut short, and the data cut short.
    check(
        "short.gguf",
        &good[..200],
        "byte 200: error: the file ends inside its header",
    );
    check(
        "partial.gguf",
        &good[..good.len() - 100],
        "the file is truncated",
    );
    // An unknown ggml type in the first tensor.
    let mut w2 = Writer::default();
    w2.str("general.architecture", "llama");
    w2.tensor("token_embd.weight", &[256, 4], 77, 0);
    check(
        "type.gguf",
        &w2.bytes(),
        "tensor `token_embd.weight` has unknown ggml type 77",
    );
    // A row that is not a whole number of blocks.
    let mut w3 = Writer::default();
    w3.str("general.architecture", "llama");
    w3.tensor("token_embd.weight", &[100, 4], Q4_K.0, 0);
    check(
        "rows.gguf",
        &w3.bytes(),
        "a row of 100 is not a whole number of Q4_K blocks of 256",
    );
    // A tensor named twice (llama.cpp refuses the file).
    let mut w5 = Writer::default();
    w5.str("general.architecture", "llama");
    w5.tensor("token_embd.weight", &[256, 4], F32, 4096);
    w5.tensor("token_embd.weight", &[256, 4], F32, 4096);
    check(
        "twice.gguf",
        &w5.bytes(),
        "tensor `token_embd.weight` is named twice",
    );
    // No architecture keys.
    let mut w4 = Writer::default();
    w4.str("general.architecture", "llama");
    check(
        "keys.gguf",
        &w4.bytes(),
        "no `llama.block_count` in the metadata",
    );
}

#[test]
fn a_file_without_a_file_type_is_named_by_its_tensors() {
    // Converters that write no `general.file_type` (an F16 or F32 export):
    // the format is the one closest in bits per weight, unquantized ones
    // included, not the nearest quantization.
    let dir = tempfile::tempdir().unwrap();
    for (ggml_type, bytes_per_weight, expected) in [
        (1, 2, sizing::WeightFormat::Fp16),
        (F32, 4, sizing::WeightFormat::Fp32),
    ] {
        let (h, vocab) = (256u64, 100u64);
        let mut w = Writer::default();
        w.str("general.architecture", "llama")
            .u32("llama.block_count", 1)
            .u32("llama.embedding_length", h as u32)
            .u32("llama.attention.head_count", 4)
            .tokens(vocab as usize);
        for (name, dims) in [
            ("token_embd.weight", [h, vocab]),
            ("blk.0.attn_q.weight", [h, h]),
            ("blk.0.ffn_up.weight", [h, h]),
        ] {
            w.tensor(name, &dims, ggml_type, dims[0] * dims[1] * bytes_per_weight);
        }
        let path = write(dir.path(), &format!("t{ggml_type}.gguf"), &w.bytes());
        let read = gguf::read(&path).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(read.format, expected);
    }
}
