//! errata's integration tests: fixture sites under `tests/fixtures/<case>/`,
//! built through one builder, one module per feature. The harnesses (a static
//! server, a WebDriver client, a wasm runner, a serve driver, a link server)
//! live in `support/`, one file each.

mod authoring;
mod browser;
mod bundles;
mod calculator;
mod callouts;
mod check;
mod default_site;
mod find;
mod hosting;
mod incremental;
mod pages;
mod seed;
mod serve;
mod sponsored;
mod support;
mod tabs;
