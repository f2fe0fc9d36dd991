//! The `errata` command line: clap parses, the library works, and this file
//! maps the result to an exit code.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use errata::{BuildError, BuildOptions};

/// A static site generator for error triage pages.
#[derive(Debug, Parser)]
#[command(name = "errata", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Build the site into the output folder (public/ by default).
    ///
    /// The site is written to a fresh folder first and replaces the output
    /// folder only when the whole build succeeds. errata replaces only a
    /// folder it built itself (one holding its .errata-output file), or an
    /// empty or new one; never the site root, a folder above it, a source
    /// folder or anything inside one, or a file.
    Build {
        /// The site root: the folder holding site.toml.
        #[arg(long, short, default_value = ".", value_name = "DIR")]
        root: PathBuf,
        /// Where to write the site [default: <root>/public].
        #[arg(long, short, value_name = "DIR")]
        output: Option<PathBuf>,
        /// Override base_url from site.toml, e.g. for preview deploys.
        #[arg(long, value_name = "URL")]
        base_url: Option<String>,
        /// Include pages and sections marked `draft: true`.
        #[arg(long)]
        drafts: bool,
        /// Print the time each build stage took.
        #[arg(long)]
        timings: bool,
        /// Ignore the incremental cache in .errata/ and render every page.
        #[arg(long)]
        clean: bool,
        /// Replace the output folder even though errata did not build it
        /// (everything in it is deleted). Source folders are still refused.
        #[arg(long)]
        force: bool,
    },
    /// Check the site without deploying it, for CI.
    ///
    /// Runs everything `errata build` validates (without touching public/)
    /// plus lints: duplicate ids, missing descriptions, log patterns that do
    /// not compile or do not match their page's signature. Exit code: 0 when
    /// clean, 2 when problems are found, 1 for usage or config errors.
    Check {
        /// The site root: the folder holding site.toml.
        #[arg(long, short, default_value = ".", value_name = "DIR")]
        root: PathBuf,
        /// Output format.
        #[arg(long, value_enum, default_value = "human")]
        format: CheckFormat,
        /// Count warnings as errors for the exit code.
        #[arg(long)]
        warnings_as_errors: bool,
        /// Include pages and sections marked `draft: true`.
        #[arg(long)]
        drafts: bool,
        /// Report only pages changed since this git revision and the pages linking to them.
        #[arg(long, value_name = "GIT-REV")]
        changed_since: Option<String>,
        /// Also check outbound http(s) links (settings: [check.external] in site.toml).
        #[arg(long)]
        external: bool,
    },
    /// Build the site and serve it on 127.0.0.1 with live reload.
    ///
    /// Rebuilds when content/, data/, themes/, templates/, static/ or
    /// site.toml change, and reloads open tabs. A failed rebuild keeps the
    /// last good site and shows the errors in the page and the terminal.
    Serve {
        /// The site root: the folder holding site.toml.
        #[arg(long, short, default_value = ".", value_name = "DIR")]
        root: PathBuf,
        /// Port on 127.0.0.1 (0 picks a free one).
        #[arg(long, short, default_value_t = 1111)]
        port: u16,
        /// Include pages and sections marked `draft: true`.
        #[arg(long)]
        drafts: bool,
        /// Open the site in the default browser.
        #[arg(long)]
        open: bool,
    },
    /// Create a triage page for an error message from the archetype.
    ///
    /// Writes content/<section>/<slug>.md with the title, signature, an
    /// escaped log pattern and today's date filled in, as a draft. Never
    /// overwrites an existing file.
    New {
        /// The error message, exactly as users see it.
        message: String,
        /// The section folder under content/.
        #[arg(long, default_value = "errors")]
        section: String,
        /// Tools the fixes cover, comma-separated (one remediation subsection each).
        #[arg(long, value_delimiter = ',')]
        tools: Vec<String>,
        /// The site root: the folder holding site.toml.
        #[arg(long, short, default_value = ".", value_name = "DIR")]
        root: PathBuf,
    },
    /// Estimate the GPU memory a model needs, and what makes it fit.
    ///
    /// Uses the same code as the calculator on the site's pages.
    Size(Box<SizeArgs>),
}

/// How `errata check` prints problems.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum CheckFormat {
    /// Grouped by file, coloured at a terminal.
    Human,
    /// One JSON document: {version, errors, warnings, problems: [{severity, file, line, column, message, help}]}.
    Json,
    /// JUnit XML for CI test reports.
    Junit,
    /// GitHub Actions annotations (::error file=...,line=...,col=...::message).
    Github,
}

/// How `errata size` prints its answer.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum SizeFormat {
    /// A table for people.
    Text,
    /// The JSON the page's calculator uses.
    Json,
}

/// The `errata size` arguments.
#[derive(Debug, clap::Args)]
struct SizeArgs {
    /// A preset from data/models.yaml, such as llama-3.1-8b.
    #[arg(long, conflicts_with = "params")]
    model: Option<String>,
    /// Custom architecture: total parameters.
    #[arg(long, requires_all = ["layers", "hidden", "heads", "vocab"])]
    params: Option<u64>,
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
    /// The GPU to fit on, from data/gpus.yaml (gives max_context and suggestions).
    #[arg(long)]
    gpu: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    format: SizeFormat,
    /// The site root whose data/ folder holds the presets.
    #[arg(long, default_value = ".", value_name = "DIR")]
    root: PathBuf,
}

fn main() -> ExitCode {
    // Usage errors exit with 1 (clap's default is 2, which `errata check`
    // reserves for "problems found"); --help and --version exit with 0.
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(error) => {
            let _ = error.print();
            return ExitCode::from(u8::from(error.use_stderr()));
        }
    };
    match cli.command {
        Command::Build {
            root,
            output,
            base_url,
            drafts,
            timings,
            clean,
            force,
        } => {
            let options = BuildOptions {
                root,
                output,
                base_url,
                drafts,
                clean,
                force,
                progress: Some(progress()),
                check_only: false,
            };
            build(&options, timings)
        }
        Command::Size(args) => size(&args),
        Command::Check {
            root,
            format,
            warnings_as_errors,
            drafts,
            changed_since,
            external,
        } => {
            let format = match format {
                CheckFormat::Human => errata::check::Format::Human,
                CheckFormat::Json => errata::check::Format::Json,
                CheckFormat::Junit => errata::check::Format::Junit,
                CheckFormat::Github => errata::check::Format::Github,
            };
            match errata::check::check(&errata::check::CheckOptions {
                root,
                drafts,
                changed_since,
                external,
            }) {
                Ok(problems) => {
                    let colour = std::io::stdout().is_terminal();
                    print!("{}", errata::check::render(&problems, format, colour));
                    ExitCode::from(errata::check::exit_code(&problems, warnings_as_errors))
                }
                Err(message) => {
                    eprintln!("error: {message}");
                    ExitCode::FAILURE
                }
            }
        }
        Command::Serve {
            root,
            port,
            drafts,
            open,
        } => {
            let options = errata::serve::ServeOptions {
                root,
                port,
                drafts,
                open,
            };
            match errata::serve::serve(&options) {
                Ok(()) => ExitCode::SUCCESS,
                Err(message) => {
                    eprintln!("error: {message}");
                    ExitCode::FAILURE
                }
            }
        }
        Command::New {
            message,
            section,
            tools,
            root,
        } => new_page(&root, message, section, tools),
    }
}

fn new_page(
    root: &std::path::Path,
    message: String,
    section: String,
    tools: Vec<String>,
) -> ExitCode {
    let config = match errata::config::Config::load(root) {
        Ok(config) => config,
        Err(all) => {
            for d in all {
                eprintln!("{d}");
            }
            return ExitCode::FAILURE;
        }
    };
    let page = errata::scaffold::NewPage {
        message,
        section,
        tools,
        date: errata::scaffold::today(),
    };
    match errata::scaffold::create(&config, &page) {
        Ok(created) => {
            println!("Created {}", created.path.display());
            println!(
                "It will be at {} (it is a draft: build or serve with --drafts to see it)",
                created.url
            );
            ExitCode::SUCCESS
        }
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}

fn size(args: &SizeArgs) -> ExitCode {
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
    let model = match (&args.model, args.params) {
        (Some(id), _) => Architecture::Preset(id.clone()),
        (None, Some(params)) => {
            let heads = args.heads.unwrap_or(1);
            let hidden = args.hidden.unwrap_or(0);
            Architecture::Custom(ModelPreset {
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
            })
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

fn build(options: &BuildOptions, timings: bool) -> ExitCode {
    let colour = std::io::stderr().is_terminal();
    match errata::build(options) {
        Ok(report) => {
            for warning in &report.warnings {
                eprintln!("{}", paint(&warning.to_string(), colour, "33"));
            }
            println!(
                "Built {} page(s) ({} from cache), {} section(s), {} HTML file(s), {} code block(s) in {} ms -> {}",
                report.pages,
                report.cached_pages,
                report.sections,
                report.html_files,
                report.code_blocks,
                report.total.as_millis(),
                report.output.display()
            );
            if timings {
                for (stage, time) in &report.timings {
                    println!("  {stage:<10} {:>8.1} ms", time.as_secs_f64() * 1000.0);
                }
            }
            ExitCode::SUCCESS
        }
        Err(BuildError::Diagnostics(all)) => {
            // Every problem is counted; the first ones are enough to read.
            for d in all.iter().take(MAX_SHOWN) {
                let code = if d.is_error() { "31" } else { "33" };
                eprintln!("{}", paint(&d.to_string(), colour, code));
            }
            if all.len() > MAX_SHOWN {
                eprintln!("... and {} more", all.len() - MAX_SHOWN);
            }
            let errors = all.iter().filter(|d| d.is_error()).count();
            eprintln!(
                "error: build failed with {errors} error(s); the output folder was not changed"
            );
            ExitCode::FAILURE
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Build progress for people: at a terminal, a progress bar that appears
/// once the build has taken more than a second; elsewhere (CI logs), a
/// plain line per finished stage and per tenth of the pages.
fn progress() -> errata::pipeline::Progress {
    use std::sync::Mutex;
    use std::time::{Duration, Instant};
    let start = Instant::now();
    if std::io::stderr().is_terminal() {
        let bar =
            indicatif::ProgressBar::with_draw_target(None, indicatif::ProgressDrawTarget::hidden());
        if let Ok(style) = indicatif::ProgressStyle::with_template(
            "{spinner} {msg:>9} [{bar:30}] {pos}/{len} pages ({per_sec})",
        ) {
            bar.set_style(style.progress_chars("=> "));
        }
        let shown = Mutex::new(false);
        errata::pipeline::Progress(std::sync::Arc::new(
            move |stage: &str, done: usize, total: usize| {
                let mut shown = shown.lock().unwrap_or_else(|e| e.into_inner());
                if !*shown && start.elapsed() > Duration::from_secs(1) {
                    bar.set_draw_target(indicatif::ProgressDrawTarget::stderr());
                    *shown = true;
                }
                if total > 0 {
                    bar.set_length(total as u64);
                    bar.set_position(done as u64);
                    bar.set_message(stage.to_string());
                } else if stage == "write" {
                    bar.finish_and_clear();
                }
            },
        ))
    } else {
        let last_tenth = Mutex::new(0usize);
        errata::pipeline::Progress(std::sync::Arc::new(
            move |stage: &str, done: usize, total: usize| {
                if total == 0 {
                    if start.elapsed() > Duration::from_secs(1) {
                        eprintln!("{stage} done ({:.1} s)", start.elapsed().as_secs_f64());
                    }
                    return;
                }
                let tenth = done * 10 / total;
                let mut last = last_tenth.lock().unwrap_or_else(|e| e.into_inner());
                if tenth > *last && start.elapsed() > Duration::from_secs(1) {
                    eprintln!("{stage}: {done}/{total} pages");
                }
                *last = (*last).max(tenth);
            },
        ))
    }
}

/// How many problems a failed build prints before summarising the rest.
const MAX_SHOWN: usize = 50;

fn paint(text: &str, colour: bool, code: &str) -> String {
    if colour {
        format!("\x1b[{code}m{text}\x1b[0m")
    } else {
        text.to_string()
    }
}
