//! The architecture: the numbers from a model's `config.json` that decide memory.

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
    pub(crate) fn embedding_params(&self) -> f64 {
        let one = (self.vocab * self.hidden) as f64;
        if self.tied_embeddings { one } else { 2.0 * one }
    }
}
