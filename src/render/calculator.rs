//! The calculator on a page, computed once per front-matter state.

use super::*;

pub(super) fn query_model(query: &Query) -> String {
    match &query.model {
        Architecture::Preset(id) => id.clone(),
        Architecture::Custom(m) => m.id.clone(),
    }
}

impl Renderer<'_> {
    /// The calculator's view for a page's front-matter state.
    pub(super) fn cached_calculator(
        &self,
        state: &CalculatorState,
    ) -> Result<CalculatorView, String> {
        let key = format!(
            "{}|{}|{}|{:?}|{:?}",
            state.model, state.weights, state.context, state.runtime, state.gpu
        );
        if let Some(hit) = self
            .calculator_cache
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&key)
        {
            return hit.clone();
        }
        let view = self.calculator(state);
        self.calculator_cache
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(key, view.clone());
        view
    }

    pub(super) fn calculator(&self, state: &CalculatorState) -> Result<CalculatorView, String> {
        if self.catalogue.models.is_empty() {
            return Err("the page has a calculator but the site has no data/models.yaml".into());
        }
        let query = Query {
            model: Architecture::Preset(state.model.clone()),
            weights: state.weights.clone(),
            runtime: state.runtime.clone().unwrap_or_else(|| "pytorch".into()),
            context: state.context,
            gpu: Some(state.gpu.clone().unwrap_or_else(|| {
                let default = Query::default().gpu.unwrap_or_default();
                if self.catalogue.gpus.iter().any(|g| g.name == default) {
                    default
                } else {
                    self.catalogue
                        .gpus
                        .first()
                        .map(|g| g.name.clone())
                        .unwrap_or_default()
                }
            })),
            ..Query::default()
        };
        let result = self
            .catalogue
            .answer(&query)
            .map_err(|e| format!("calculator: {e}"))?;
        let shown = [
            "weights_gib",
            "kv_cache_gib",
            "compute_gib",
            "overhead_gib",
            "total_gib",
        ]
        .into_iter()
        .map(|k| (k, format!("{:.2}", result[k].as_f64().unwrap_or(0.0))))
        .collect();
        Ok(CalculatorView {
            model: query_model(&query),
            weights: query.weights,
            runtime: query.runtime,
            context: query.context,
            kv: query.kv,
            gpu: query.gpu.unwrap_or_default(),
            result,
            shown,
            models: self
                .catalogue
                .models
                .iter()
                .map(|m| (m.id.clone(), m.name.clone()))
                .collect(),
            gpus: self.catalogue.gpus.iter().map(|g| g.name.clone()).collect(),
            formats: crate::calculator::weight_formats(),
            runtimes: ["pytorch", "vllm", "llama.cpp", "ollama"],
            kv_types: ["f16", "fp8", "q8_0", "q4_0"],
        })
    }
}
