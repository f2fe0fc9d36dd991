//! `errata size --config PATH`: a Hugging Face `config.json` read into a
//! [`sizing::Model`]. The parameter count comes from the shapes.
//!
//! The keys each family uses (as `transformers` names them):
//! - every family: `num_hidden_layers`, `hidden_size`, `num_attention_heads`,
//!   `num_key_value_heads` (default: the heads), `head_dim` (default:
//!   hidden / heads), `vocab_size`, `intermediate_size`, `tie_word_embeddings`;
//! - Gemma 3 and other multimodal checkpoints nest the language model under
//!   `text_config`; Gemma 3 leaves out what `Gemma3TextConfig` defaults;
//! - experts: `num_local_experts` (Mixtral, gpt-oss), `num_experts`
//!   (Qwen-MoE), `n_routed_experts` (DeepSeek); per token:
//!   `num_experts_per_tok`, or gpt-oss's `experts_per_token`; widths:
//!   `moe_intermediate_size` (else `intermediate_size`), shared experts:
//!   `shared_expert_intermediate_size` (Qwen2-MoE) or `n_shared_experts` ×
//!   `moe_intermediate_size` (DeepSeek); dense layers: DeepSeek's
//!   `first_k_dense_replace`, Qwen-MoE's `mlp_only_layers` and
//!   `decoder_sparse_step`;
//! - sliding-window layers: `layer_types` where present (gpt-oss, recent
//!   Gemma), else Gemma 2's every other layer and Gemma 3's
//!   `sliding_window_pattern` (5 of every 6). Qwen's and Mistral's
//!   `sliding_window` is off (`use_sliding_window: false`, or null) or
//!   covers the whole context, so it is not counted;
//! - DeepSeek V2/V3/R1's multi-head latent attention: the low-rank
//!   projections (`q_lora_rank`, `kv_lora_rank`, `qk_nope_head_dim`,
//!   `qk_rope_head_dim`, `v_head_dim`), and a cache of `kv_lora_rank +
//!   qk_rope_head_dim` values per token and layer.

use std::path::Path;

use serde::Deserialize;
use sizing::Model;

use crate::diagnostics::{Diagnostic, LineIndex};

/// The keys of `config.json` that decide memory; the rest are ignored.
#[derive(Debug, Default, Deserialize)]
struct HfConfig<'a> {
    model_type: Option<String>,
    /// Kept raw (borrowed from the file's text) so that errors inside it
    /// point into the file.
    #[serde(borrow)]
    text_config: Option<&'a serde_json::value::RawValue>,
    num_hidden_layers: Option<u64>,
    hidden_size: Option<u64>,
    num_attention_heads: Option<u64>,
    num_key_value_heads: Option<u64>,
    head_dim: Option<u64>,
    vocab_size: Option<u64>,
    intermediate_size: Option<u64>,
    tie_word_embeddings: Option<bool>,
    max_position_embeddings: Option<u64>,
    // Mixture of experts.
    num_local_experts: Option<u64>,
    num_experts: Option<u64>,
    n_routed_experts: Option<u64>,
    num_experts_per_tok: Option<u64>,
    experts_per_token: Option<u64>,
    moe_intermediate_size: Option<u64>,
    shared_expert_intermediate_size: Option<u64>,
    n_shared_experts: Option<u64>,
    first_k_dense_replace: Option<u64>,
    decoder_sparse_step: Option<u64>,
    mlp_only_layers: Option<Vec<u64>>,
    // Sliding-window attention.
    sliding_window: Option<u64>,
    sliding_window_pattern: Option<u64>,
    layer_types: Option<Vec<String>>,
    // Multi-head latent attention.
    q_lora_rank: Option<u64>,
    kv_lora_rank: Option<u64>,
    qk_nope_head_dim: Option<u64>,
    qk_rope_head_dim: Option<u64>,
    v_head_dim: Option<u64>,
}

/// A model read from `config.json`, with the context it was trained for.
#[derive(Debug, Clone, PartialEq)]
pub struct ReadConfig {
    /// The architecture.
    pub model: Model,
    /// `model_type` (`llama`, `qwen3_moe`, `gemma3_text`...).
    pub model_type: String,
    /// `max_position_embeddings`, when given.
    pub max_context: Option<u64>,
}

/// What `Gemma3TextConfig` defaults: Gemma 3's `text_config` leaves these
/// out (`transformers/models/gemma3/configuration_gemma3.py`).
fn gemma3_defaults(c: &mut HfConfig<'_>) {
    c.vocab_size.get_or_insert(262_208);
    c.num_attention_heads.get_or_insert(8);
    c.num_key_value_heads.get_or_insert(4);
    c.head_dim.get_or_insert(256);
    c.sliding_window.get_or_insert(4096);
    c.sliding_window_pattern.get_or_insert(6);
    c.tie_word_embeddings.get_or_insert(true);
    c.max_position_embeddings.get_or_insert(131_072);
}

/// Reads `config.json` at `path`.
pub fn read(path: &Path) -> Result<ReadConfig, Diagnostic> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| Diagnostic::error(path, 1, 1, format!("cannot read: {e}")))?;
    parse(path, &text)
}

/// The byte offset of `slice`, a part of `text`.
fn offset_in(text: &str, slice: &str) -> usize {
    (slice.as_ptr() as usize).saturating_sub(text.as_ptr() as usize)
}

/// Parses the JSON object `part` of `text` (all of it, or `text_config`),
/// with errors located in `text`.
fn object<'a>(path: &Path, text: &str, part: &'a str) -> Result<HfConfig<'a>, Diagnostic> {
    let start = offset_in(text, part) + (part.len() - part.trim_start().len());
    if !part.trim_start().starts_with('{') {
        let (line, col) = LineIndex::new(text).line_col(start.min(text.len()));
        return Err(Diagnostic::error(
            path,
            line,
            col,
            "config.json must hold a JSON object",
        ));
    }
    serde_json::from_str(part).map_err(|e| {
        // serde_json gives a line and a (byte) column within `part`.
        let line_start: usize = part
            .split_inclusive('\n')
            .take(e.line().saturating_sub(1))
            .map(str::len)
            .sum();
        let at = offset_in(text, part) + line_start + e.column().saturating_sub(1);
        let (line, col) = LineIndex::new(text).line_col(at.min(text.len()));
        // The position is in the location; the message is what precedes it.
        let message = e.to_string();
        let message = message
            .rsplit_once(" at line ")
            .map_or(message.as_str(), |(m, _)| m);
        Diagnostic::error(path, line, col, format!("config.json: {message}"))
    })
}

/// Reads the text of a `config.json`; `path` names it in errors.
pub fn parse(path: &Path, text: &str) -> Result<ReadConfig, Diagnostic> {
    let outer = object(path, text, text)?;
    let outer_type = outer.model_type.clone().unwrap_or_default();
    let nested = outer.text_config.is_some();
    // The object that holds the language model, and where it starts.
    let (mut c, start) = match &outer.text_config {
        Some(raw) => (object(path, text, raw.get())?, offset_in(text, raw.get())),
        None => {
            let start = text.len() - text.trim_start().len();
            (outer, start)
        }
    };
    let model_type = c.model_type.clone().unwrap_or(outer_type);
    if model_type.starts_with("gemma3") {
        gemma3_defaults(&mut c);
    }
    let missing = |key: &str| {
        let (line, col) = LineIndex::new(text).line_col(start);
        let within = if nested { " in `text_config`" } else { "" };
        Diagnostic::error(
            path,
            line,
            col,
            format!("config.json has no `{key}`{within}: is this a language model's config?"),
        )
    };
    let layers = c
        .num_hidden_layers
        .ok_or_else(|| missing("num_hidden_layers"))?;
    let hidden = c.hidden_size.ok_or_else(|| missing("hidden_size"))?;
    let heads = c
        .num_attention_heads
        .ok_or_else(|| missing("num_attention_heads"))?;
    let vocab = c.vocab_size.ok_or_else(|| missing("vocab_size"))?;
    let intermediate = c
        .intermediate_size
        .ok_or_else(|| missing("intermediate_size"))?;
    if layers == 0 || hidden == 0 || heads == 0 || vocab == 0 {
        let (line, col) = LineIndex::new(text).line_col(start);
        return Err(Diagnostic::error(
            path,
            line,
            col,
            "config.json gives zero layers, hidden size, heads or vocabulary",
        ));
    }
    let mut model = Model {
        kv_heads: c.num_key_value_heads.unwrap_or(heads),
        head_dim: c.head_dim.unwrap_or(hidden / heads),
        // transformers' default is tied; Llama, Qwen, Mistral and Phi
        // configs untie unless they say so, Gemma's keep the default.
        tied_embeddings: c
            .tie_word_embeddings
            .unwrap_or(model_type.starts_with("gemma")),
        intermediate,
        ..Model::dense(0.0, layers, hidden, heads, vocab)
    };
    let experts = c
        .num_local_experts
        .or(c.num_experts)
        .or(c.n_routed_experts)
        .unwrap_or(0);
    if experts > 1 {
        model.experts = experts;
        model.experts_used = c.num_experts_per_tok.or(c.experts_per_token).unwrap_or(0);
        let width = c.moe_intermediate_size.unwrap_or(intermediate);
        model.expert_intermediate = width;
        model.shared_intermediate = c
            .shared_expert_intermediate_size
            .or(c.n_shared_experts.map(|n| n * width))
            .unwrap_or(0);
        // Layers without experts: leading ones (DeepSeek), listed ones and
        // those `decoder_sparse_step` skips (Qwen-MoE), counted together.
        let step = c.decoder_sparse_step.unwrap_or(1).max(1);
        let skipped = (0..layers)
            .filter(|i| {
                c.mlp_only_layers.as_ref().is_some_and(|l| l.contains(i)) || (i + 1) % step != 0
            })
            .count() as u64;
        model.dense_layers = c.first_k_dense_replace.unwrap_or(0).max(skipped);
        if model.experts_used == 0 {
            return Err(missing("num_experts_per_tok"));
        }
    }
    // Sliding-window layers.
    let window = c.sliding_window.unwrap_or(0);
    let sliding = match (&c.layer_types, model_type.as_str()) {
        (Some(types), _) => types
            .iter()
            .filter(|t| t.as_str() == "sliding_attention")
            .count() as u64,
        (None, "gemma2") => layers / 2,
        (None, t) if t.starts_with("gemma3") => {
            let pattern = c.sliding_window_pattern.unwrap_or(6).max(1);
            layers - layers / pattern
        }
        _ => 0,
    };
    if window > 0 && sliding > 0 {
        model.sliding_window = window;
        model.sliding_layers = sliding.min(layers);
    }
    // DeepSeek's multi-head latent attention.
    if let (Some(kv_rank), Some(rope)) = (c.kv_lora_rank, c.qk_rope_head_dim) {
        let nope = c.qk_nope_head_dim.unwrap_or(0);
        let v = c.v_head_dim.unwrap_or(nope);
        let q_head = nope + rope;
        let q = match c.q_lora_rank {
            Some(rank) => hidden * rank + rank + rank * heads * q_head,
            None => hidden * heads * q_head,
        };
        let kv = hidden * (kv_rank + rope) + kv_rank + kv_rank * heads * (nope + v);
        model.attention = q + kv + heads * v * hidden;
        // The cache holds the compressed KV and the rope key: one "head"
        // whose K and V together are kv_lora_rank + qk_rope_head_dim wide.
        model.kv_heads = 1;
        model.head_dim = (kv_rank + rope).div_ceil(2);
    }
    Ok(ReadConfig {
        model,
        model_type,
        max_context: c.max_position_embeddings,
    })
}
