//! `errata match`: which triage pages explain the errors in a log?
//!
//! Loads the site's pages (configuration, front matter and URLs; nothing is
//! rendered), streams each log through the [`matcher`] crate, and prints
//! the ranked pages for people, as JSON, or as GitHub Actions annotations.

use std::fmt::Write as _;
use std::io::Read;
use std::path::PathBuf;

use crate::assemble::assemble;
use crate::config::Config;
use crate::diagnostics::Diagnostic;
use crate::load::load;
use crate::log_text::LogText;
use crate::match_index;
use crate::parse::parse_loaded;

/// Exit code when a page matched.
pub const MATCHED: u8 = 0;
/// Exit code for usage errors, a broken site and unreadable input.
pub const FAILED: u8 = 1;
/// Exit code when no page matched.
pub const NO_MATCH: u8 = 2;

/// How `errata match` prints its answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// For people: each page's title, URL, the log line and the captures.
    Human,
    /// {"matches":[{url, title, signature, source, line, text, captures, kind, score}]}.
    Json,
    /// One GitHub Actions ::error annotation per page.
    Github,
}

/// The `errata match` arguments.
#[derive(Debug, Clone, clap::Args)]
pub struct MatchArgs {
    /// Log files; standard input when none is given or for `-`.
    #[arg(value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// The site root: the folder holding site.toml.
    #[arg(long, short, default_value = ".", value_name = "DIR")]
    pub root: PathBuf,
    /// Override base_url from site.toml for the URLs printed.
    #[arg(long, value_name = "URL")]
    pub base_url: Option<String>,
    /// Print at most N pages, best first.
    #[arg(long, default_value_t = 5, value_name = "N",
          value_parser = clap::value_parser!(u64).range(1..))]
    pub limit: u64,
    /// Output format.
    #[arg(long, value_enum, default_value = "human")]
    pub format: Format,
}

/// Loads the site's match index with absolute URLs: every problem that
/// stops it (a broken `site.toml`, front matter, a pattern that does not
/// compile) is returned.
pub fn site_index(
    root: &std::path::Path,
    base_url: Option<&str>,
) -> Result<matcher::Index, Vec<String>> {
    let located = |all: Vec<Diagnostic>| all.iter().map(|d| d.to_string()).collect::<Vec<_>>();
    let mut config = Config::load_for_content(root).map_err(located)?;
    if let Some(url) = base_url {
        config.set_base_url(url).map_err(|e| vec![e])?;
    }
    let (files, mut all) = load(root, &config.content_dir(), None);
    let parsed = parse_loaded(files, false, false);
    all.extend(parsed.diagnostics.iter().cloned());
    let (site, assembled) = assemble(parsed, &config);
    all.extend(assembled);
    all.extend(match_index::check_patterns(&site, None));
    all.retain(Diagnostic::is_error);
    if !all.is_empty() {
        crate::diagnostics::sort(&mut all);
        return Err(located(all));
    }
    Ok(match_index::index(&site, |path| config.absolute(path)))
}

/// Runs `errata match`; returns the exit code. `stdin` is read for `-`.
pub fn run(args: &MatchArgs, stdin: &mut dyn Read, out: &mut dyn std::io::Write) -> u8 {
    let index = match site_index(&args.root, args.base_url.as_deref()) {
        Ok(index) => index,
        Err(problems) => {
            for p in problems {
                eprintln!("{p}");
            }
            eprintln!("error: cannot load the site's pages; nothing was matched");
            return FAILED;
        }
    };
    let matcher = match matcher::Matcher::new(index) {
        Ok(m) => m,
        Err(errors) => {
            for e in errors {
                eprintln!(
                    "error: pattern `{}` does not compile: {}",
                    e.pattern, e.message
                );
            }
            return FAILED;
        }
    };
    let inputs: Vec<PathBuf> = if args.files.is_empty() {
        vec![PathBuf::from("-")]
    } else {
        args.files.clone()
    };
    let mut scan = matcher.scan();
    let mut chunk = vec![0u8; 64 * 1024];
    for (i, input) in inputs.iter().enumerate() {
        if i > 0 {
            matcher.next_input(&mut scan);
        }
        let mut file;
        let reader: &mut dyn Read = if input.as_os_str() == "-" {
            &mut *stdin
        } else {
            match std::fs::File::open(input) {
                Ok(f) => {
                    file = f;
                    &mut file
                }
                Err(e) => {
                    eprintln!("error: cannot read {}: {e}", input.display());
                    return FAILED;
                }
            }
        };
        let mut text = LogText::new();
        loop {
            match reader.read(&mut chunk) {
                Ok(0) => break,
                Ok(n) => text.feed(&chunk[..n], &mut |t| matcher.feed(&mut scan, t)),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    eprintln!("error: cannot read {}: {e}", input.display());
                    return FAILED;
                }
            }
        }
        text.finish(&mut |t| matcher.feed(&mut scan, t));
    }
    let mut matches = matcher.finish(scan);
    matches.truncate(usize::try_from(args.limit).unwrap_or(usize::MAX));
    let names: Vec<String> = inputs.iter().map(|p| p.display().to_string()).collect();
    let text = match args.format {
        Format::Human => human(&matches, &names),
        Format::Json => json(&matches, &names),
        Format::Github => github(&matches, &names),
    };
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        // A reader that stopped early (`| head`) took what it wanted.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
        Err(e) => {
            eprintln!("error: cannot write the matches: {e}");
            return FAILED;
        }
        Ok(()) => {}
    }
    if matches.is_empty() {
        NO_MATCH
    } else {
        MATCHED
    }
}

/// Where a match is in the logs: `line 12`, or `build.log:12` with several logs.
fn location(m: &matcher::Match, names: &[String]) -> String {
    if names.len() > 1 {
        format!("{}:{}", names[m.input], m.line)
    } else {
        format!("line {}", m.line)
    }
}

fn human(matches: &[matcher::Match], names: &[String]) -> String {
    let mut out = String::new();
    if matches.is_empty() {
        out.push_str("No triage page matches this log.\n");
    }
    for (i, m) in matches.iter().enumerate() {
        let _ = writeln!(out, "{}. {}\n   {}", i + 1, m.title, m.url);
        let _ = writeln!(out, "   {}: {}", location(m, names), m.text);
        for (name, value) in &m.captures.0 {
            let _ = writeln!(out, "   {name}: {value}");
        }
        if m.kind == matcher::Kind::Fuzzy {
            let _ = writeln!(
                out,
                "   (no pattern matched; the signature is {:.0}% similar)",
                m.score * 100.0
            );
        }
    }
    out
}

fn json(matches: &[matcher::Match], names: &[String]) -> String {
    let mut matches = matches.to_vec();
    if names.len() > 1 {
        // With several logs, say which one each line number is in.
        for m in &mut matches {
            m.log = Some(names[m.input].clone());
        }
    }
    format!("{}\n", matcher::to_json(&matches))
}

fn github(matches: &[matcher::Match], names: &[String]) -> String {
    let mut out = String::new();
    for m in matches {
        let mut message = format!("{}\n{}: {}", m.url, location(m, names), m.text);
        for (name, value) in &m.captures.0 {
            let _ = write!(message, "\n{name}: {value}");
        }
        let _ = writeln!(
            out,
            "::error title={}::{}",
            crate::escape::github(&m.title, true),
            crate::escape::github(&message, false)
        );
    }
    out
}
