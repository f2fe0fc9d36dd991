//! `errata size`: the sizing calculator on the command line. clap parses the
//! arguments into the `sizing` crate's own types (its weight formats,
//! runtimes and KV-cache types are `clap::ValueEnum`s), and the crate
//! answers the typed question, with the code the page's WebAssembly runs.

use std::path::PathBuf;
use std::process::ExitCode;

use errata::calculator::{Catalogue, gguf, hf_config};
use errata::diagnostics::Diagnostic;
use sizing::{Answer, Choice as _, Input, KvType, Model, Runtime, WeightFormat};

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
    #[arg(long, conflicts_with_all = ["params", "config"])]
    model: Option<String>,
    /// A Hugging Face config.json (Llama, Qwen2/3 and their MoE, Mistral,
    /// Mixtral, Gemma 2/3, Phi-3/4, DeepSeek V2/V3/R1, gpt-oss): the
    /// architecture and, from its shapes, the parameter count.
    #[arg(long, value_name = "PATH", conflicts_with = "params")]
    config: Option<PathBuf>,
    /// A GGUF model file: its header and tensor table only (never the
    /// weights). The weights are the exact sum of its tensors; the
    /// architecture and the format come from its metadata.
    #[arg(long, value_name = "PATH", conflicts_with_all = ["model", "params", "config", "weights"])]
    gguf: Option<PathBuf>,
    /// Custom architecture: total parameters, as 6738415616, 6.74e9, 7B, 70b or 1.5T.
    #[arg(long, requires_all = ["layers", "hidden", "heads", "vocab"], value_name = "COUNT",
          value_parser = sizing::parse::parse_count)]
    params: Option<f64>,
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
    /// Weight format (GGUF names such as q4_k_m are llama.cpp's mixes) [default: fp16].
    #[arg(long, value_enum, ignore_case = true, value_name = "FORMAT")]
    weights: Option<WeightFormat>,
    /// The program that runs the model.
    #[arg(long, value_enum, ignore_case = true, default_value = "pytorch")]
    runtime: Runtime,
    /// Context length in tokens (-c, num_ctx, --max-model-len, sequence length).
    #[arg(long, default_value_t = 4096)]
    context: u64,
    /// Parallel slots (llama.cpp --parallel, OLLAMA_NUM_PARALLEL) or batch size (PyTorch).
    #[arg(long, default_value_t = 1)]
    parallel: u64,
    /// KV-cache element type.
    #[arg(
        long,
        value_enum,
        ignore_case = true,
        default_value = "f16",
        value_name = "TYPE"
    )]
    kv_cache: KvType,
    /// Flash attention (llama.cpp -fa on|off).
    #[arg(long, value_parser = ["on", "off"], default_value = "on")]
    flash_attn: String,
    /// vLLM --gpu-memory-utilization: the fraction of the GPU vLLM may use, more than 0 and at most 1.
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
    #[arg(long, value_name = "AMOUNT", value_parser = sizing::parse::parse_memory)]
    gpu_memory: Option<f64>,
    /// GPUs sharing the model: vLLM --tensor-parallel-size, llama.cpp's and
    /// Ollama's layer split. Figures are per GPU (the fullest one).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=sizing::MAX_GPUS))]
    gpus: u64,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    format: SizeFormat,
    /// The site root whose data/ folder holds the presets.
    #[arg(long, default_value = ".", value_name = "DIR")]
    root: PathBuf,
}

pub(crate) fn run(args: &SizeArgs) -> ExitCode {
    let catalogue = match Catalogue::load(&args.root) {
        Ok(c) => c,
        Err(all) => {
            for d in all {
                eprintln!("{d}");
            }
            return ExitCode::FAILURE;
        }
    };
    let answered = input(args, &catalogue).map(|input| {
        let answer = sizing::answer(&input);
        (input, answer)
    });
    match answered {
        Ok((input, answer)) => {
            match args.format {
                SizeFormat::Json => println!("{}", sizing::write_answer(&input, &answer)),
                SizeFormat::Text => print!("{}", human_size(&input, &answer)),
            }
            ExitCode::SUCCESS
        }
        Err(Problem::Located(d)) => {
            eprintln!("{d}");
            ExitCode::FAILURE
        }
        Err(Problem::File(e)) => {
            eprintln!("{e}");
            ExitCode::FAILURE
        }
        Err(Problem::Message(message)) => {
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}

/// Why a question cannot be answered: a problem in a file the user gave
/// (with its `path:line:col`), or in the arguments.
enum Problem {
    Located(Diagnostic),
    File(gguf::GgufError),
    Message(String),
}

impl From<String> for Problem {
    fn from(message: String) -> Problem {
        Problem::Message(message)
    }
}

/// The architecture the arguments name.
fn model(args: &SizeArgs, catalogue: &Catalogue) -> Result<Model, Problem> {
    if let Some(path) = &args.config {
        return hf_config::read(path)
            .map(|read| read.model)
            .map_err(Problem::Located);
    }
    match (&args.model, args.params) {
        (Some(id), _) => Ok(catalogue.model(id)?.model.clone()),
        (None, Some(params)) => {
            let base = Model::dense(
                params,
                args.layers.unwrap_or(0),
                args.hidden.unwrap_or(0),
                args.heads.unwrap_or(0),
                args.vocab.unwrap_or(0),
            );
            Ok(Model {
                kv_heads: args.kv_heads.unwrap_or(base.kv_heads),
                head_dim: args.head_dim.unwrap_or(base.head_dim),
                tied_embeddings: args.tied,
                ..base
            })
        }
        (None, None) => Err(Problem::Message(
            "give --model <preset>, --config <config.json> or a custom architecture (--params --layers --hidden --heads --vocab ...)"
                .into(),
        )),
    }
}

/// The question the arguments ask, checked as the WebAssembly checks it.
fn input(args: &SizeArgs, catalogue: &Catalogue) -> Result<Input, Problem> {
    if let Some(path) = &args.gguf {
        let file = gguf::read(path).map_err(Problem::File)?;
        let input = Input {
            weights: file.format,
            ..question(args, catalogue.input(file.model.clone()))
        };
        input.profiles.seed(&file.model, file.format, file.profile);
        return target(args, input);
    }
    target(
        args,
        Input {
            weights: args.weights.unwrap_or(WeightFormat::Fp16),
            ..question(args, catalogue.input(model(args, catalogue)?))
        },
    )
}

/// `base` with the arguments' runtime, context and the rest.
fn question(args: &SizeArgs, base: Input) -> Input {
    Input {
        runtime: args.runtime,
        context: args.context,
        parallel: args.parallel,
        kv: args.kv_cache,
        flash_attention: args.flash_attn == "on",
        gpu_memory_utilization: args.gpu_memory_utilization,
        train: args.train,
        checkpointing: args.checkpointing,
        tensor_parallel: args.gpus,
        ..base
    }
}

/// Checks `input` as the WebAssembly checks it and picks the GPU.
fn target(args: &SizeArgs, mut input: Input) -> Result<Input, Problem> {
    input.validate()?;
    if let Some(name) = &args.gpu {
        input.target_named(name)?;
    }
    if let Some(bytes) = args.gpu_memory {
        input.target_memory(bytes);
    }
    Ok(input)
}

fn human_size(input: &Input, a: &Answer) -> String {
    use std::fmt::Write as _;
    let gib = |bytes: f64| bytes / sizing::GIB;
    let b = &a.breakdown;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} weights, {} KV cache, {} tokens, runtime {}",
        input.weights.name(),
        input.kv.name(),
        b.kv_tokens,
        input.runtime.name()
    );
    let _ = writeln!(
        out,
        "{:.2}B parameters ({:.2}B active per token), {:.2} bits per weight",
        a.params / 1e9,
        a.active_params / 1e9,
        a.bits_per_weight
    );
    for (label, bytes) in [
        ("weights", b.weights),
        ("KV cache", b.kv_cache),
        ("compute", b.compute),
        ("overhead", b.overhead),
        ("total", b.total()),
    ] {
        let _ = writeln!(out, "  {label:<10} {:>8.2} GiB", gib(bytes));
    }
    if let Some(t) = &a.target {
        let gpu = &input.gpus[t.gpu];
        let verdict = if t.fits() { "fits" } else { "does not fit" };
        let _ = writeln!(
            out,
            "{} ({:.2} GiB): {verdict}, headroom {:.2} GiB",
            gpu.name,
            gpu.memory_mib / 1024.0,
            gib(t.headroom)
        );
    }
    if input.tensor_parallel > 1 {
        let _ = writeln!(
            out,
            "per GPU of {}; each holds {:.2} GiB in full (compute, context, replicated tensors)",
            input.tensor_parallel,
            gib(b.replicated)
        );
    }
    if b.host > 0.0 {
        let _ = writeln!(
            out,
            "system RAM: {:.2} GiB (token embeddings stay on the CPU)",
            gib(b.host)
        );
    }
    if let Some(o) = a.target.as_ref().and_then(|t| t.offload) {
        let _ = writeln!(
            out,
            "offload: {} of {} layers on the GPU ({:.2} GiB), {:.2} GiB in system RAM",
            o.gpu_layers,
            o.all_layers,
            gib(o.gpu),
            gib(o.host)
        );
    }
    if let Some(n) = a.max_context {
        let _ = writeln!(out, "largest context that fits: {n} tokens");
    }
    let fits: Vec<&str> = a
        .fits
        .iter()
        .map(|f| input.gpus[f.gpu].name.as_str())
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
    for s in &a.suggestions {
        let _ = writeln!(out, "try: {s}");
    }
    out
}
