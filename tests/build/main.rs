//! errata's integration tests, split by feature like mdBook's test suite:
//! one module per feature, each over fixture sites under
//! `tests/fixtures/<case>/` that show what it tests, built through one
//! builder ([`support::Fixture`]). The harnesses (a static server, a
//! WebDriver client, the find box's page helpers, a wasm runner, a serve
//! driver, a link server, the link-policy check, the default site's shared
//! build) live in `support/`, one file each.
//!
//! - `authoring`: `errata new`; `callouts`, `tabs`: what authors write.
//! - `pages`: sections, drafts, front matter, templates, sources, output.
//! - `bundles`: page bundles; `hosting`: base URLs, crawls through a real server.
//! - `sponsored`: the link policy, disclosures, JSON-LD.
//! - `calculator`: the committed wasm, the no-JS figures, the widget in Chromium.
//! - `find`: the paste-or-search box, matching and Pagefind in Chromium.
//! - `browser`: copy buttons; `check`: `errata check`; `serve`: `errata serve`.
//! - `incremental`: the build cache.
//! - `seed`: the seed page and the repository's own default site, the only
//!   module that builds that site (once, shared by its tests).
//! - `default_site`: that site's output digest, pinned byte for byte (built
//!   from its own copy, cold and then warm).

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
mod search_index;
mod search_session;
mod seed;
mod serve;
mod sponsored;
mod support;
mod tabs;
