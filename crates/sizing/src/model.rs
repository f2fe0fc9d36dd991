//! The architecture: the numbers from a model's `config.json` that decide
//! memory, and the weight tensors they imply, class by class.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

/// The architecture numbers that decide memory, as in a model's `config.json`.
#[derive(Debug, Clone, PartialEq)]
pub struct Model {
    /// Total parameters (all experts of a mixture-of-experts model). When the
    /// tensor shapes add up to less (biases, extra norms), the rest is counted
    /// as small unquantised tensors; when `intermediate` is unknown, the
    /// dense FFN width is worked out from it.
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
    /// `intermediate_size`: the dense FFN width (0: worked out from `params`).
    pub intermediate: u64,
    /// Routed experts per MoE layer (`num_local_experts`, `num_experts`,
    /// `n_routed_experts`); 0 for a dense model.
    pub experts: u64,
    /// Experts each token uses (`num_experts_per_tok`).
    pub experts_used: u64,
    /// Each expert's FFN width (`moe_intermediate_size`; 0: `intermediate`).
    pub expert_intermediate: u64,
    /// The shared experts' total FFN width (Qwen-MoE, DeepSeek); 0 for none.
    pub shared_intermediate: u64,
    /// Leading layers with a dense FFN in an MoE model (DeepSeek's
    /// `first_k_dense_replace`).
    pub dense_layers: u64,
    /// Sliding-window attention: the window in tokens (0: none).
    pub sliding_window: u64,
    /// How many layers use the sliding window (Gemma 3: 5 of every 6).
    pub sliding_layers: u64,
    /// Attention weights per layer when they are not shaped by heads ×
    /// head_dim (DeepSeek's multi-head latent attention, whose low-rank
    /// projections a reader of `config.json` adds up); 0: from the heads.
    pub attention: u64,
}

/// Sizes no model has, a hundred times over what the largest ones use:
/// past them a model is a mistake (a typo, a corrupt file), and the
/// calculator would allocate and multiply without bound.
const LIMITS: [(&str, u64); 14] = [
    ("layers", 1 << 16),
    ("hidden", 1 << 24),
    ("heads", 1 << 16),
    ("kv_heads", 1 << 16),
    ("head_dim", 1 << 16),
    ("vocab", 1 << 26),
    ("intermediate", 1 << 26),
    ("experts", 1 << 16),
    ("experts_used", 1 << 16),
    ("expert_intermediate", 1 << 26),
    ("shared_intermediate", 1 << 26),
    ("dense_layers", 1 << 16),
    ("sliding_window", 1 << 32),
    ("attention", 1 << 40),
];

impl Model {
    /// Refuses a model no calculation can be made for: a size past what
    /// any model has, more KV heads than heads, more experts used than
    /// there are, a parameter count that is not a finite number. The
    /// error names the key (as `data/models.yaml` and requests write it).
    pub fn check_sizes(&self) -> Result<(), (&'static str, String)> {
        let values = [
            self.layers,
            self.hidden,
            self.heads,
            self.kv_heads,
            self.head_dim,
            self.vocab,
            self.intermediate,
            self.experts,
            self.experts_used,
            self.expert_intermediate,
            self.shared_intermediate,
            self.dense_layers,
            self.sliding_window,
            self.attention,
        ];
        for ((key, limit), value) in LIMITS.iter().zip(values) {
            if value > *limit {
                return Err((
                    key,
                    format!("`{key}` is {value}: no model has more than {limit}"),
                ));
            }
        }
        if !self.params.is_finite() || self.params < 0.0 || self.params > 1e15 {
            // No float in the message: formatting one would add a third
            // to the WebAssembly.
            return Err(("params", "`params` is not a parameter count".into()));
        }
        if self.heads > 0 && self.kv_heads > self.heads {
            return Err((
                "kv_heads",
                format!(
                    "`kv_heads` ({}) is more than `heads` ({})",
                    self.kv_heads, self.heads
                ),
            ));
        }
        if self.experts_used > self.experts && self.experts > 0 {
            return Err((
                "experts_used",
                format!(
                    "`experts_used` ({}) is more than `experts` ({})",
                    self.experts_used, self.experts
                ),
            ));
        }
        if self.dense_layers > self.layers {
            return Err((
                "dense_layers",
                format!(
                    "`dense_layers` ({}) is more than `layers` ({})",
                    self.dense_layers, self.layers
                ),
            ));
        }
        Ok(())
    }

    /// A dense model with the given numbers and nothing else.
    pub fn dense(params: f64, layers: u64, hidden: u64, heads: u64, vocab: u64) -> Model {
        Model {
            params,
            layers,
            hidden,
            heads,
            kv_heads: heads,
            head_dim: hidden.checked_div(heads).unwrap_or(0),
            vocab,
            tied_embeddings: false,
            intermediate: 0,
            experts: 0,
            experts_used: 0,
            expert_intermediate: 0,
            shared_intermediate: 0,
            dense_layers: 0,
            sliding_window: 0,
            sliding_layers: 0,
            attention: 0,
        }
    }

    /// True for a mixture-of-experts model.
    pub fn is_moe(&self) -> bool {
        self.experts > 1
    }

    /// Whether layer `i` has routed experts.
    pub(crate) fn moe_layer(&self, i: u64) -> bool {
        self.is_moe() && i >= self.dense_layers
    }

    fn expert_width(&self) -> u64 {
        if self.expert_intermediate > 0 {
            self.expert_intermediate
        } else {
            self.intermediate
        }
    }

    /// Parameters of everything but the dense FFNs, from the shapes.
    fn params_without_dense_ffn(&self) -> f64 {
        let (h, q) = (self.hidden as f64, (self.heads * self.head_dim) as f64);
        let kv = (self.kv_heads * self.head_dim) as f64;
        let embeddings = self.vocab as f64 * h * if self.tied_embeddings { 1.0 } else { 2.0 };
        let attention = if self.attention > 0 {
            self.attention as f64 + 2.0 * h
        } else {
            2.0 * h * q + 2.0 * h * kv + 2.0 * h
        };
        let moe_layers = self.layers.saturating_sub(self.dense_layers) as f64;
        let moe = if self.is_moe() {
            moe_layers
                * (self.experts as f64 * 3.0 * h * self.expert_width() as f64
                    + 3.0 * h * self.shared_intermediate as f64
                    + h * self.experts as f64)
        } else {
            0.0
        };
        embeddings + self.layers as f64 * attention + moe + h
    }

    /// The dense FFN width: `intermediate`, or what `params` leaves for it.
    pub(crate) fn dense_width(&self) -> u64 {
        if self.intermediate > 0 {
            return self.intermediate;
        }
        let dense_layers = if self.is_moe() {
            self.dense_layers
        } else {
            self.layers
        };
        let per_layer = 3.0 * self.hidden as f64 * dense_layers as f64;
        if per_layer <= 0.0 {
            return 0;
        }
        let left = self.params - self.params_without_dense_ffn();
        if left > 0.0 {
            (left / per_layer) as u64
        } else {
            0
        }
    }

    /// Every weight tensor class with its parameters, layer by layer.
    pub(crate) fn tensors(&self) -> Vec<Tensor> {
        let h = self.hidden;
        let q = self.heads * self.head_dim;
        let kv = self.kv_heads * self.head_dim;
        let dense = self.dense_width();
        let width = self.expert_width();
        let mut out = Vec::with_capacity(self.layers as usize * 8 + 4);
        let push = |out: &mut Vec<Tensor>, class, layer, params: f64, ncols| {
            if params > 0.0 {
                out.push(Tensor {
                    class,
                    layer,
                    params,
                    ncols,
                })
            }
        };
        let embeddings = (self.vocab * h) as f64;
        push(&mut out, Class::TokenEmbd, 0, embeddings, h);
        if !self.tied_embeddings {
            push(&mut out, Class::Output, 0, embeddings, h);
        }
        for i in 0..self.layers {
            if self.attention > 0 {
                // Low-rank projections: llama.cpp gives them the base type.
                push(&mut out, Class::AttnQ, i, self.attention as f64, h);
            } else {
                push(&mut out, Class::AttnQ, i, (h * q) as f64, h);
                push(&mut out, Class::AttnK, i, (h * kv) as f64, h);
                push(&mut out, Class::AttnV, i, (h * kv) as f64, h);
                push(&mut out, Class::AttnOutput, i, (q * h) as f64, q);
            }
            if self.moe_layer(i) {
                let e = self.experts as f64;
                push(
                    &mut out,
                    Class::ExpertGateUp,
                    i,
                    e * 2.0 * (h * width) as f64,
                    h,
                );
                push(
                    &mut out,
                    Class::ExpertDown,
                    i,
                    e * (width * h) as f64,
                    width,
                );
                push(&mut out, Class::Router, i, e * h as f64, h);
                let shared = self.shared_intermediate;
                push(&mut out, Class::FfnGateUp, i, 2.0 * (h * shared) as f64, h);
                push(&mut out, Class::FfnDown, i, (shared * h) as f64, shared);
            } else {
                push(&mut out, Class::FfnGateUp, i, 2.0 * (h * dense) as f64, h);
                push(&mut out, Class::FfnDown, i, (dense * h) as f64, dense);
            }
            push(&mut out, Class::Norm, i, 2.0 * h as f64, h);
        }
        push(&mut out, Class::Norm, self.layers, h as f64, h);
        let listed: f64 = out.iter().map(|t| t.params).sum();
        if self.params > listed {
            // Biases, q/k norms, attention sinks: small and never quantised.
            out.push(Tensor {
                class: Class::Norm,
                layer: self.layers,
                params: self.params - listed,
                ncols: 1,
            });
        }
        out
    }

    /// Total parameters from the shapes (or `params` when that is larger).
    pub fn total_params(&self) -> f64 {
        self.tensors().iter().map(|t| t.params).sum()
    }

    /// Parameters one token passes through: every routed expert counts
    /// `experts_used / experts`. Memory holds all of them; compute uses these.
    pub fn active_params(&self) -> f64 {
        let share = if self.is_moe() && self.experts_used > 0 {
            self.experts_used.min(self.experts) as f64 / self.experts as f64
        } else {
            1.0
        };
        self.tensors()
            .iter()
            .map(|t| match t.class {
                Class::ExpertGateUp | Class::ExpertDown => t.params * share,
                _ => t.params,
            })
            .sum()
    }
}

/// What a weight tensor does, as llama.cpp's quantiser tells them apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    /// `token_embd`.
    TokenEmbd,
    /// `output` (the LM head).
    Output,
    /// `attn_q`.
    AttnQ,
    /// `attn_k`.
    AttnK,
    /// `attn_v`.
    AttnV,
    /// `attn_output`.
    AttnOutput,
    /// Dense (or shared-expert) `ffn_gate` and `ffn_up`.
    FfnGateUp,
    /// Dense (or shared-expert) `ffn_down`.
    FfnDown,
    /// Routed experts' `ffn_gate_exps` and `ffn_up_exps`.
    ExpertGateUp,
    /// Routed experts' `ffn_down_exps`.
    ExpertDown,
    /// The router (`ffn_gate_inp`): never quantised.
    Router,
    /// Norms, biases and other small tensors: never quantised.
    Norm,
}

/// One tensor (or a layer's worth of one class).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Tensor {
    /// Its class.
    pub class: Class,
    /// Its layer (0 for the embeddings and the head).
    pub layer: u64,
    /// Its parameters.
    pub params: f64,
    /// Its row length (`ne[0]` in ggml): quant blocks must divide it.
    pub ncols: u64,
}
