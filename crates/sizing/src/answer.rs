//! The whole answer to one question, typed: the breakdown, the target GPU's
//! verdict, where else it fits, the largest context and the suggestions.
//! `errata` renders it natively; the WebAssembly writes it as JSON.

use alloc::string::String;
use alloc::vec::Vec;

use crate::fit::{Fit, fits_on, headroom, max_context, suggestions};
use crate::input::Input;
use crate::runtime::{Breakdown, Offload, estimate, offload};

/// The verdict for the chosen GPU.
#[derive(Debug, Clone, PartialEq)]
pub struct Target {
    /// Index into the input's `gpus`.
    pub gpu: usize,
    /// Memory left over, in bytes (negative when it does not fit).
    pub headroom: f64,
    /// For llama.cpp and Ollama when the model does not fit: the partial offload that does.
    pub offload: Option<Offload>,
}

impl Target {
    /// True when the model fits.
    pub fn fits(&self) -> bool {
        self.headroom >= 0.0
    }
}

/// Everything the calculator says about one input.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    /// Memory per GPU, term by term.
    pub breakdown: Breakdown,
    /// Total parameters, from the shapes.
    pub params: f64,
    /// Parameters one token passes through (fewer than `params` for MoE).
    pub active_params: f64,
    /// Average bits per weight of the chosen format on this model.
    pub bits_per_weight: f64,
    /// The chosen GPU's verdict.
    pub target: Option<Target>,
    /// The catalogue GPUs it fits on.
    pub fits: Vec<Fit>,
    /// The largest context that fits the chosen GPU.
    pub max_context: Option<u64>,
    /// Changes that make it fit, in the runtime's own syntax.
    pub suggestions: Vec<String>,
}

/// Answers `input` (which [`Input::validate`] has accepted).
pub fn answer(input: &Input) -> Answer {
    let target = input.gpu.and_then(|i| input.gpus.get(i).map(|g| (i, g)));
    Answer {
        breakdown: estimate(input),
        params: input.model.total_params(),
        active_params: input.model.active_params(),
        bits_per_weight: input.profiles.get(&input.model, input.weights).total * 8.0
            / input.model.total_params().max(1.0),
        target: target.map(|(i, gpu)| Target {
            gpu: i,
            headroom: headroom(input, &estimate(input), gpu),
            offload: offload(input, gpu),
        }),
        fits: fits_on(input),
        max_context: max_context(input),
        suggestions: suggestions(input),
    }
}
