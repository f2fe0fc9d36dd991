//! errata: a static site generator for error triage pages.
//!
//! One pipeline (`pipeline::run`) of stages; data moves forward as owned
//! values, and `build`, `check` and `serve` differ only in the sink at the end:
//!
//! ```text
//! load      walk content/ (sorted, skip hidden)                  -> Vec<SourceFile>
//! parse     split + parse front matter (par)                     -> Parsed (pages, sections, broken files)
//! assemble  permalinks, sections, taxonomies, link map           -> SiteIndex            sink.parsed(&site)
//! render    one Job per page/section/taxonomy/term/404 (par):    -> RenderedPage         (or sink.lookup: cached)
//!           markdown, highlight, templates over a &SiteContext
//! finish    link policy, disclosure, JSON-LD check, ids + links  -> RenderedPage (finished)
//!           (lol_html; the same for every sink)
//!                          |
//!          +---------------+------------------------------+
//!          v                                              v
//! sink::WriteSink (build, serve)                 check::CheckSink (check)
//!   minify, write into a staging folder,           keep ids, links (and outbound
//!                                                  links, when a pass needs them) in memory;
//!   store in the incremental cache;                then check internal links,
//!   then swap the folder in for public/            lint the parsed pages
//!   (a failed build leaves public/ as it was)
//! ```
//!
//! Every page streams through finish into its sink: no stage holds every
//! rendered page. Before the build, [`output_dir`] decides whether the
//! output folder may be replaced at all (resolved paths; only folders
//! errata built). [`progress`] names the stages for the progress hook.
//! Around the pipeline: [`serve`] (live reload), [`scaffold`] (`errata
//! new`), [`calculator`] over the `sizing` crate, and [`match_cmd`]
//! (`errata match`) over the `matcher` crate.

pub mod affiliate_ids;
pub mod assemble;
pub mod assets;
pub mod bundle;
pub mod cache;
pub mod calculator;
pub mod check;
pub mod claims;
pub mod config;
pub mod diagnostics;
pub mod escape;
pub mod external;
pub mod file_stat;
pub mod finish;
pub mod front_matter;
pub mod hash;
pub mod highlight;
pub mod images;
pub mod jsonld;
mod learned;
pub mod links;
pub mod load;
pub mod local_links;
pub mod log_text;
pub mod markdown;
pub mod match_cmd;
pub mod match_index;
pub mod minify;
pub mod outbound;
pub mod output_dir;
pub mod outputs;
pub mod parse;
pub mod pipeline;
pub mod progress;
pub mod render;
pub mod sanitize;
pub mod scaffold;
pub mod search;
pub mod serve;
pub mod sink;
pub mod slug;
pub mod snapshot;
mod state_file;
mod suggest;
pub mod templates;
pub mod write;

pub use diagnostics::{Diagnostic, Severity};
pub use pipeline::{BuildError, BuildOptions, BuildReport, build};
