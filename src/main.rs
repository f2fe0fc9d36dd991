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
    /// folder only when the whole build succeeds.
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
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Build {
            root,
            output,
            base_url,
            drafts,
            timings,
        } => {
            let options = BuildOptions {
                root,
                output,
                base_url,
                drafts,
            };
            build(&options, timings)
        }
    }
}

fn build(options: &BuildOptions, timings: bool) -> ExitCode {
    let colour = std::io::stderr().is_terminal();
    match errata::build(options) {
        Ok(report) => {
            for warning in &report.warnings {
                eprintln!("{}", paint(&warning.to_string(), colour, "33"));
            }
            println!(
                "Built {} page(s), {} section(s), {} HTML file(s), {} code block(s) in {} ms -> {}",
                report.pages,
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
            for d in &all {
                let code = if d.is_error() { "31" } else { "33" };
                eprintln!("{}", paint(&d.to_string(), colour, code));
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

fn paint(text: &str, colour: bool, code: &str) -> String {
    if colour {
        format!("\x1b[{code}m{text}\x1b[0m")
    } else {
        text.to_string()
    }
}
