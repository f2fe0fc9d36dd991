//! `errata size`: the sizing calculator on the command line. clap parses the
//! arguments here; `errata::calculator` builds the request and the `sizing`
//! crate answers it, exactly as the page's WebAssembly does.

use std::path::PathBuf;
use std::process::ExitCode;

/// How `errata size` prints its answer.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub(crate) enum SizeFormat {
    /// A table for people.
    Text,
    /// The JSON the page's calculator uses.
    Json,
}

/// The `errata size` arguments.
#[derive(Debug, clap::Args)]
pub(crate) struct SizeArgs {
    /// A preset from data/models.yaml, such as llama-3.1-8b.
    #[arg(long, conflicts_with = "params")]
    model: Option<String>,
    /// Custom architecture: total parameters, as 6738415616, 6.74e9, 7B, 70b or 1.5T.
    #[arg(long, requires_all = ["layers", "hidden", "heads", "vocab"], value_name = "COUNT")]
    params: Option<String>,
    /// Custom architecture: num_hidden_layers.
    #[arg(long)]
    layers: Option<u64>,
    /// Custom architecture: hidden_size.
    #[arg(long)]
    hidden: Option<u64>,
    /// Custom architecture: num_attention_heads.
    #[arg(long)]
    heads: Option<u64>,
    /// Custom architecture: num_key_value_heads [default: heads].
    #[arg(long)]
    kv_heads: Option<u64>,
    /// Custom architecture: head_dim [default: hidden / heads].
    #[arg(long)]
    head_dim: Option<u64>,
    /// Custom architecture: vocab_size.
    #[arg(long)]
    vocab: Option<u64>,
    /// Custom architecture: the LM head shares the embedding matrix.
    #[arg(long)]
    tied: bool,
    /// Weight format: fp32, bf16, fp16, fp8, int8, awq, gptq, q8_0, q6_k, q5_k_m, q5_0, q4_k_m, q4_0, q3_k_m, q2_k, iq4_xs.
    #[arg(long, default_value = "fp16")]
    weights: String,
    /// Runtime: pytorch, vllm, llama.cpp or ollama.
    #[arg(long, default_value = "pytorch")]
    runtime: String,
    /// Context length in tokens (-c, num_ctx, --max-model-len, sequence length).
    #[arg(long, default_value_t = 4096)]
    context: u64,
    /// Parallel slots (llama.cpp --parallel, OLLAMA_NUM_PARALLEL) or batch size (PyTorch).
    #[arg(long, default_value_t = 1)]
    parallel: u64,
    /// KV-cache type: f16, fp8, q8_0, q4_0, f32.
    #[arg(long, default_value = "f16")]
    kv_cache: String,
    /// Flash attention (llama.cpp -fa on|off).
    #[arg(long, value_parser = ["on", "off"], default_value = "on")]
    flash_attn: String,
    /// vLLM --gpu-memory-utilization.
    #[arg(long, default_value_t = 0.9)]
    gpu_memory_utilization: f64,
    /// Full fine-tuning with AdamW instead of inference (PyTorch).
    #[arg(long)]
    train: bool,
    /// Activation checkpointing when training.
    #[arg(long)]
    checkpointing: bool,
    /// The GPU to fit on, from data/gpus.yaml, in any case or as a slug
    /// (`RTX 3090`, `rtx-3090`, `rtx3090`); gives max_context and suggestions.
    #[arg(long, conflicts_with = "gpu_memory")]
    gpu: Option<String>,
    /// Size against a card that is not in the list: 24GiB, 24GB (read as
    /// GiB, as on spec sheets) or 24576MiB.
    #[arg(long, value_name = "AMOUNT")]
    gpu_memory: Option<String>,
    /// GPUs sharing the model: vLLM --tensor-parallel-size, llama.cpp's and
    /// Ollama's layer split. Figures are per GPU (the fullest one).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=64))]
    gpus: u64,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    format: SizeFormat,
    /// The site root whose data/ folder holds the presets.
    #[arg(long, default_value = ".", value_name = "DIR")]
    root: PathBuf,
}

pub(crate) fn run(args: &SizeArgs) -> ExitCode {
    use errata::calculator::{Architecture, Catalogue, ModelPreset, Query};
    let catalogue = match Catalogue::load(&args.root) {
        Ok(c) => c,
        Err(all) => {
            for d in all {
                eprintln!("{d}");
            }
            return ExitCode::FAILURE;
        }
    };
    let model = match (&args.model, &args.params) {
        (Some(id), _) => Architecture::Preset(id.clone()),
        (None, Some(params)) => {
            let params = match sizing::parse::parse_count(params) {
                Ok(n) => n as u64,
                Err(message) => {
                    eprintln!("error: --params: {message}");
                    return ExitCode::FAILURE;
                }
            };
            let heads = args.heads.unwrap_or(1);
            let hidden = args.hidden.unwrap_or(0);
            Architecture::Custom(Box::new(ModelPreset {
                id: "custom".into(),
                name: "Custom".into(),
                source: None,
                params,
                layers: args.layers.unwrap_or(0),
                hidden,
                heads,
                kv_heads: args.kv_heads.unwrap_or(heads),
                head_dim: args.head_dim.unwrap_or(hidden / heads.max(1)),
                vocab: args.vocab.unwrap_or(0),
                tied_embeddings: args.tied,
                max_context: None,
                intermediate: None,
                moe: None,
                sliding: None,
            }))
        }
        (None, None) => {
            eprintln!(
                "error: give --model <preset> or a custom architecture (--params --layers --hidden --heads --vocab ...)"
            );
            return ExitCode::FAILURE;
        }
    };
    let query = Query {
        model,
        weights: args.weights.clone(),
        runtime: args.runtime.clone(),
        context: args.context,
        parallel: args.parallel,
        kv: args.kv_cache.clone(),
        flash_attention: args.flash_attn == "on",
        gpu_memory_utilization: args.gpu_memory_utilization,
        train: args.train,
        checkpointing: args.checkpointing,
        gpu: args.gpu.clone(),
        gpu_memory: args.gpu_memory.clone(),
        gpus: args.gpus,
    };
    let answer = match catalogue.answer(&query) {
        Ok(answer) => answer,
        Err(message) => {
            eprintln!("error: {message}");
            return ExitCode::FAILURE;
        }
    };
    match args.format {
        SizeFormat::Json => println!("{answer}"),
        SizeFormat::Text => print!("{}", human_size(&answer)),
    }
    ExitCode::SUCCESS
}

fn human_size(a: &serde_json::Value) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} weights, {} KV cache, {} tokens, runtime {}",
        a["weights"].as_str().unwrap_or(""),
        a["kv_type"].as_str().unwrap_or(""),
        a["kv_tokens"],
        a["runtime"].as_str().unwrap_or("")
    );
    let _ = writeln!(
        out,
        "{:.2}B parameters ({:.2}B active per token), {:.2} bits per weight",
        a["params_b"].as_f64().unwrap_or(0.0),
        a["active_params_b"].as_f64().unwrap_or(0.0),
        a["bits_per_weight"].as_f64().unwrap_or(0.0)
    );
    for (label, key) in [
        ("weights", "weights_gib"),
        ("KV cache", "kv_cache_gib"),
        ("compute", "compute_gib"),
        ("overhead", "overhead_gib"),
        ("total", "total_gib"),
    ] {
        let _ = writeln!(
            out,
            "  {label:<10} {:>8.2} GiB",
            a[key].as_f64().unwrap_or(0.0)
        );
    }
    if let Some(t) = a["target"].as_object() {
        let verdict = if t["fits"].as_bool() == Some(true) {
            "fits"
        } else {
            "does not fit"
        };
        let _ = writeln!(
            out,
            "{} ({:.2} GiB): {verdict}, headroom {:.2} GiB",
            t["name"].as_str().unwrap_or(""),
            t["memory_gib"].as_f64().unwrap_or(0.0),
            t["headroom_gib"].as_f64().unwrap_or(0.0)
        );
    }
    let gpus = a["gpus"].as_u64().unwrap_or(1);
    if gpus > 1 {
        let _ = writeln!(
            out,
            "per GPU of {gpus}; each holds {:.2} GiB in full (compute, context, replicated tensors)",
            a["replicated_gib"].as_f64().unwrap_or(0.0)
        );
    }
    if a["host_gib"].as_f64().unwrap_or(0.0) > 0.0 {
        let _ = writeln!(
            out,
            "system RAM: {:.2} GiB (token embeddings stay on the CPU)",
            a["host_gib"].as_f64().unwrap_or(0.0)
        );
    }
    if let Some(o) = a["target"]["offload"].as_object() {
        let _ = writeln!(
            out,
            "offload: {} of {} layers on the GPU ({:.2} GiB), {:.2} GiB in system RAM",
            o["gpu_layers"],
            o["all_layers"],
            o["gpu_gib"].as_f64().unwrap_or(0.0),
            o["ram_gib"].as_f64().unwrap_or(0.0)
        );
    }
    if let Some(n) = a["max_context"].as_u64() {
        let _ = writeln!(out, "largest context that fits: {n} tokens");
    }
    let fits: Vec<&str> = a["fits"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|f| f["gpu"].as_str())
        .collect();
    let _ = writeln!(
        out,
        "fits on: {}",
        if fits.is_empty() {
            "none of the catalogue".to_string()
        } else {
            fits.join(", ")
        }
    );
    for s in a["suggestions"].as_array().into_iter().flatten() {
        let _ = writeln!(out, "try: {}", s.as_str().unwrap_or(""));
    }
    out
}
