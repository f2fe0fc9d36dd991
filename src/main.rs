//! The `errata` command line: clap parses, the library works, and this file
//! maps the result to an exit code.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod size;

/// mimalloc instead of the system's malloc: allocation was about 15% of a
/// build's profile (README, Performance, has the figures).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// `mi_option_purge_delay` in the mimalloc that libmimalloc-sys 0.1.49
/// vendors (v3, `include/mimalloc.h`), which has no Rust name for it.
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// Tells mimalloc to keep the memory a build frees instead of returning it
/// to the system a second later (its default). `errata serve` builds again
/// after every edit, usually more than a second apart: returned memory had
/// to be faulted in and zeroed by the kernel again on every rebuild, a
/// third of a 10,000-page rebuild's time (README, Performance). The cost
/// is that the server's memory stays at its largest build's. Called before
/// any other thread starts.
#[allow(unsafe_code)]
fn keep_freed_memory() {
    // SAFETY: mi_option_set stores two plain values into mimalloc's
    // option table (it ignores an index out of range). It is called
    // before `errata serve` starts any thread, so nothing reads the table
    // meanwhile; -1 is the documented "never purge".
    unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, -1) }
}

/// Turns transparent huge pages off for this process. mimalloc asks for
/// them (`madvise`), and the kernel then zeroes 2 MiB at each first touch
/// of its memory, again after each purge: on a 10,000-page build that was
/// two of its three seconds in the kernel, and about a second of its wall
/// time (README, Performance). A system that cannot turn them off builds
/// as before.
fn no_huge_pages() {
    #[cfg(target_os = "linux")]
    let _ = rustix::thread::disable_transparent_huge_pages(true);
}

use errata::escape::{Colour, paint};
use errata::progress::{Progress, Stage};
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
        /// Count warnings as errors: for the exit code, and reported as errors in every format.
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
        /// With --external: also request loopback, private, link-local and other
        /// non-public addresses, which are skipped by default (after DNS resolution,
        /// and at every redirect hop).
        #[arg(long, requires = "external")]
        include_private: bool,
    },
    /// Build the site into memory and serve it on 127.0.0.1 with live reload.
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
        /// Print the time each build stage took, after every (re)build.
        #[arg(long)]
        timings: bool,
    },
    /// Create a triage page for an error message from the archetype.
    ///
    /// Writes content/<section>/<slug>.md (with --bundle, the page bundle
    /// content/<section>/<slug>/index.md) with the title, signature, an
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
        /// Create a page bundle: a folder holding index.md, where the page's
        /// images and logs go (they are published beside the page).
        #[arg(long)]
        bundle: bool,
        /// The site root: the folder holding site.toml.
        #[arg(long, short, default_value = ".", value_name = "DIR")]
        root: PathBuf,
    },
    /// Estimate the GPU memory a model needs, and what makes it fit.
    ///
    /// Uses the same code as the calculator on the site's pages.
    Size(Box<size::SizeArgs>),
    /// Find the triage pages that explain the errors in a log.
    ///
    /// Reads the log files (standard input when none is given, or for `-`),
    /// and prints the pages whose patterns match, root cause first, with the
    /// log line and the pattern's named captures; when no pattern matches,
    /// pages whose signature closely resembles an error line. Exit code: 0
    /// when a page matched, 2 when none did, 1 for usage errors and
    /// unreadable input.
    Match(errata::match_cmd::MatchArgs),
}

/// How `errata check` prints problems.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum CheckFormat {
    /// Grouped by file, coloured at a terminal.
    Human,
    /// One JSON document: {version, errors, warnings, notes, problems: [{severity, code, file, line, column, message, help}]}.
    Json,
    /// JUnit XML for CI test reports.
    Junit,
    /// GitHub Actions annotations (::error file=...,line=...,col=...::message).
    Github,
}

fn main() -> ExitCode {
    no_huge_pages();
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
            };
            build(&options, timings)
        }
        Command::Size(args) => size::run(&args),
        Command::Match(args) => ExitCode::from(errata::match_cmd::run(
            &args,
            &mut std::io::stdin().lock(),
            &mut std::io::stdout().lock(),
        )),
        Command::Check {
            root,
            format,
            warnings_as_errors,
            drafts,
            changed_since,
            external,
            include_private,
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
                include_private,
            }) {
                Ok(mut problems) => {
                    if warnings_as_errors {
                        errata::check::warnings_as_errors(&mut problems);
                    }
                    let colour = std::io::stdout().is_terminal();
                    print!("{}", errata::check::render(&problems, format, colour));
                    ExitCode::from(errata::check::exit_code(&problems))
                }
                Err(errata::check::CheckError::Config(problems)) => {
                    let colour = std::io::stdout().is_terminal();
                    print!("{}", errata::check::render(&problems, format, colour));
                    ExitCode::FAILURE
                }
                Err(errata::check::CheckError::Other(message)) => {
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
            timings,
        } => {
            let options = errata::serve::ServeOptions {
                root,
                port,
                drafts,
                open,
                timings,
            };
            keep_freed_memory();
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
            bundle,
            root,
        } => new_page(&root, message, section, tools, bundle),
    }
}

fn new_page(
    root: &std::path::Path,
    message: String,
    section: String,
    tools: Vec<String>,
    bundle: bool,
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
        bundle,
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

fn build(options: &BuildOptions, timings: bool) -> ExitCode {
    let colour = std::io::stderr().is_terminal();
    match errata::build(options) {
        Ok(report) => {
            for warning in &report.warnings {
                eprintln!("{}", paint(&warning.to_string(), Colour::Yellow, colour));
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
                print!("{}", report.timings_table());
            }
            ExitCode::SUCCESS
        }
        Err(BuildError::Diagnostics(all)) => {
            // Every problem is counted; the first ones are enough to read.
            for d in all.iter().take(MAX_SHOWN) {
                let hue = if d.is_error() {
                    Colour::Red
                } else {
                    Colour::Yellow
                };
                eprintln!("{}", paint(&d.to_string(), hue, colour));
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
fn progress() -> Progress {
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
        Progress(std::sync::Arc::new(
            move |stage: Stage, done: usize, total: usize| {
                let mut shown = shown.lock().unwrap_or_else(|e| e.into_inner());
                if !*shown && start.elapsed() > Duration::from_secs(1) {
                    bar.set_draw_target(indicatif::ProgressDrawTarget::stderr());
                    *shown = true;
                }
                if total > 0 {
                    bar.set_length(total as u64);
                    bar.set_position(done as u64);
                    bar.set_message(stage.name());
                } else if stage == Stage::Write {
                    bar.finish_and_clear();
                }
            },
        ))
    } else {
        let last_tenth = Mutex::new(0usize);
        Progress(std::sync::Arc::new(
            move |stage: Stage, done: usize, total: usize| {
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
