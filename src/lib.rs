//! errata: a static site generator for error triage pages.
//!
//! The build is a pipeline of stages; data moves forward as owned values:
//!
//! ```text
//! load      walk content/ (walkdir, sorted, skip hidden)        -> Vec<SourceFile>
//! parse     split + parse front matter, keep body offset (par)  -> Parsed               errors with path:line:col
//! assemble  permalinks, sections, taxonomies, link map          -> SiteIndex            (sequential, global)
//! render    markdown -> html, highlight, templates (par)        -> HTML per page (or the cached files)
//! finish    link policy, disclosure, JSON-LD check (lol_html),  -> files in a staging folder,
//!           minify (par), then write at once                       each page written as it is done
//! write     swap the staging folder in for public/              (a failed build leaves public/ as it was)
//! ```
//!
//! [`pipeline::build`] sequences the stages, times them and gathers diagnostics.
//! Before any stage runs, [`output_dir`] decides whether the output folder
//! may be replaced at all (resolved paths; only folders errata built).
//! Around it: [`check`] (validation for CI), [`serve`] (live reload),
//! [`scaffold`] (`errata new`), [`calculator`] over the `sizing` crate, and
//! [`match_cmd`] (`errata match`) over the `matcher` crate.

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
pub mod external;
pub mod finish;
pub mod front_matter;
pub mod hash;
pub mod highlight;
pub mod images;
pub mod jsonld;
pub mod links;
pub mod load;
pub mod local_links;
pub mod markdown;
pub mod match_cmd;
pub mod match_index;
pub mod minify;
pub mod output_dir;
pub mod outputs;
pub mod parse;
pub mod pipeline;
pub mod progress;
pub mod render;
pub mod sanitize;
pub mod scaffold;
pub mod serve;
pub mod slug;
mod suggest;
pub mod templates;
pub mod write;

pub use diagnostics::{Diagnostic, Severity};
pub use pipeline::{BuildError, BuildOptions, BuildReport, build};
