//! The calculator on a page, computed once per front-matter state: the
//! front matter's names become a typed [`sizing::Input`], and the typed
//! [`sizing::Answer`] becomes the view the template shows without JavaScript.

use serde::Serialize;
use sizing::{Answer, Choice, Input, KvType, Runtime, WeightFormat};

use super::*;

/// The GPU a page's calculator fits on when its front matter names none.
const DEFAULT_GPU: &str = "RTX 4090";

/// GiB with two decimals, as the WebAssembly's JSON writes them (and the
/// script then shows them): rounded half away from zero.
fn gib2(bytes: f64) -> f64 {
    (bytes / sizing::GIB * 100.0).round() / 100.0
}

/// [`gib2`] as the script prints a JSON number (`12`, `7.13`, `9.1`):
/// Rust's and JavaScript's shortest round-trip forms agree, so the verdict
/// reads the same with and without JavaScript.
fn shown_gib(bytes: f64) -> String {
    gib2(bytes).to_string()
}

/// The answer as the template reads it (the fields of the JSON answer the
/// page's script shows, with the same rounding).
#[derive(Debug, Clone, Serialize)]
pub struct ResultView {
    kv_tokens: u64,
    target: Option<TargetView>,
    max_context: Option<u64>,
    fits: Vec<FitView>,
    suggestions: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
struct TargetView {
    name: String,
    memory_gib: String,
    fits: bool,
    headroom_gib: String,
    offload: Option<OffloadView>,
}

#[derive(Debug, Clone, Serialize)]
struct OffloadView {
    gpu_layers: u64,
    all_layers: u64,
    ram_gib: String,
}

#[derive(Debug, Clone, Serialize)]
struct FitView {
    gpu: String,
}

impl ResultView {
    fn new(input: &Input, a: &Answer) -> ResultView {
        let name = |i: usize| input.gpus[i].name.clone();
        ResultView {
            kv_tokens: a.breakdown.kv_tokens,
            target: a.target.as_ref().map(|t| TargetView {
                name: name(t.gpu),
                memory_gib: shown_gib(input.gpus[t.gpu].memory_mib * sizing::MIB),
                fits: t.fits(),
                headroom_gib: shown_gib(t.headroom),
                offload: t.offload.map(|o| OffloadView {
                    gpu_layers: o.gpu_layers,
                    all_layers: o.all_layers,
                    ram_gib: shown_gib(o.host),
                }),
            }),
            max_context: a.max_context,
            fits: a
                .fits
                .iter()
                .map(|f| FitView { gpu: name(f.gpu) })
                .collect(),
            suggestions: a.suggestions.clone(),
        }
    }
}

/// The names of one of the sizing crate's lists, in its order, for a `<select>`.
fn names<T: Choice>() -> Vec<&'static str> {
    T::ALL.iter().map(|v| v.name()).collect()
}

/// The calculator's view for each distinct front-matter state of the
/// site's pages: most pages share a few starting states, so each is
/// computed once per build, before rendering (renderers only read it).
#[derive(Debug, Default)]
pub struct Calculators(HashMap<String, Result<CalculatorView, String>>);

fn key(state: &CalculatorState) -> String {
    format!(
        "{}|{}|{}|{:?}|{:?}",
        state.model, state.weights, state.context, state.runtime, state.gpu
    )
}

impl Calculators {
    /// Computes the view of every state a page of `site` starts from.
    pub fn compute(catalogue: &Catalogue, site: &SiteIndex) -> Calculators {
        use rayon::prelude::*;
        let mut states: Vec<(String, &CalculatorState)> = site
            .pages
            .iter()
            .filter_map(|p| p.parsed.front.calculator.as_ref())
            .map(|state| (key(state), state))
            .collect();
        states.sort_by(|a, b| a.0.cmp(&b.0));
        states.dedup_by(|a, b| a.0 == b.0);
        Calculators(
            states
                .into_par_iter()
                .map(|(key, state)| {
                    let view = calculator(catalogue, state).map_err(|e| format!("calculator: {e}"));
                    (key, view)
                })
                .collect(),
        )
    }

    /// The view for `state` (every page's state was computed by
    /// [`Calculators::compute`]), or why there is none.
    pub(super) fn get(&self, state: &CalculatorState) -> Result<&CalculatorView, &str> {
        match self.0.get(&key(state)) {
            Some(Ok(view)) => Ok(view),
            Some(Err(message)) => Err(message),
            None => Err("calculator: the page's state was not computed"),
        }
    }
}

fn calculator(catalogue: &Catalogue, state: &CalculatorState) -> Result<CalculatorView, String> {
    if catalogue.models.is_empty() {
        return Err("the page has a calculator but the site has no data/models.yaml".into());
    }
    let preset = catalogue.model(&state.model)?;
    let mut input = Input {
        weights: WeightFormat::named(&state.weights)?,
        runtime: match &state.runtime {
            Some(name) => Runtime::named(name)?,
            None => Runtime::PyTorch,
        },
        context: state.context,
        ..catalogue.input(preset.model.clone())
    };
    input.validate()?;
    match &state.gpu {
        Some(name) => input.target_named(name)?,
        None if catalogue.gpus.iter().any(|g| g.name == DEFAULT_GPU) => {
            input.target_named(DEFAULT_GPU)?
        }
        None if !catalogue.gpus.is_empty() => input.gpu = Some(0),
        None => {}
    }
    let answer = sizing::answer(&input);
    let b = &answer.breakdown;
    let shown = [
        ("weights_gib", b.weights),
        ("kv_cache_gib", b.kv_cache),
        ("compute_gib", b.compute),
        ("overhead_gib", b.overhead),
        ("total_gib", b.total()),
    ]
    .into_iter()
    .map(|(k, bytes)| (k, format!("{:.2}", gib2(bytes))))
    .collect();
    Ok(CalculatorView {
        model: preset.id.clone(),
        weights: input.weights.name(),
        runtime: input.runtime.name(),
        context: input.context,
        kv: input.kv.name(),
        gpu: input
            .gpu
            .map(|i| input.gpus[i].name.clone())
            .unwrap_or_default(),
        result: ResultView::new(&input, &answer),
        shown,
        models: catalogue
            .models
            .iter()
            .map(|m| (m.id.clone(), m.name.clone()))
            .collect(),
        gpus: catalogue.gpus.iter().map(|g| g.name.clone()).collect(),
        formats: names::<WeightFormat>(),
        runtimes: names::<Runtime>(),
        kv_types: names::<KvType>(),
    })
}
