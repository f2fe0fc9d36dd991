//! The tables of `site.toml` that are read as written: `[search]`,
//! `[markdown]`, `[check]` with `[check.external]`, `[taxonomies]`,
//! `[links]` with its affiliate rules, and `[disclosure]`, with their
//! defaults. [`super`] reads the file and validates the rest.

use serde::{Deserialize, Serialize};
use toml::Spanned;

/// `[search]` in `site.toml`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SearchConfig {
    /// Build the full-text search index (Pagefind, under `/pagefind/`) that
    /// the "Paste your error or search" box searches. Off: no index is
    /// built, and the box only matches pasted errors. Off unless turned on:
    /// the index costs time and memory on large sites (see the README's
    /// "What full-text search costs").
    #[serde(default)]
    pub enabled: bool,
}

/// `[markdown]` in `site.toml`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MarkdownConfig {
    /// Keep raw HTML in Markdown exactly as written instead of sanitising
    /// it (Hugo's `unsafe`). Only for sites whose every author is trusted:
    /// it lets content run scripts on the site. URL attributes are still
    /// checked.
    #[serde(default)]
    pub unsafe_html: bool,
}

/// `[check]` in `site.toml`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CheckConfig {
    /// `[check.external]`: outbound link checking.
    #[serde(default)]
    pub external: ExternalConfig,
}

/// `[check.external]`: how `errata check --external` checks outbound links.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ExternalConfig {
    /// Status codes that count as working (after redirects). Default: 200–299.
    pub accept: Vec<u16>,
    /// Regular expressions; a URL matching any of them is not checked.
    pub exclude: Vec<String>,
    /// The User-Agent header sent.
    pub user_agent: String,
    /// Seconds before a request times out.
    pub timeout_secs: u64,
    /// Retries after a timeout, a connection error, 429 or 503.
    pub retries: u32,
    /// First wait before a retry, doubled each time, when the server sends no `Retry-After`.
    pub backoff_ms: u64,
    /// The longest `Retry-After` honoured, in seconds.
    pub max_retry_after_secs: u64,
    /// Requests in flight to one host at a time.
    pub per_host_concurrency: usize,
    /// Least time between two requests to one host, in milliseconds.
    pub per_host_interval_ms: u64,
    /// How long a working link stays in `.errata/linkcache.json` before it is checked again, in hours.
    pub cache_max_age_hours: u64,
    /// Requests (and open sockets) in flight at once, over all hosts.
    pub max_concurrency: usize,
    /// Redirects followed before a link counts as broken.
    pub max_redirects: usize,
    /// Also request loopback, private, link-local and other non-public
    /// addresses (skipped by default, checked after DNS resolution).
    pub include_private: bool,
    /// Hosts (as written in URLs; subdomains match) whose non-public
    /// addresses are requested anyway, such as an intranet server.
    pub allow_private_hosts: Vec<String>,
    /// Hosts (subdomains match) that answer automated requests with 403,
    /// 429 or 503; those answers are reported as "could not verify".
    pub unverifiable_hosts: Vec<String>,
}

impl Default for ExternalConfig {
    fn default() -> Self {
        ExternalConfig {
            accept: (200..=299).collect(),
            exclude: Vec::new(),
            user_agent: format!("errata-link-checker/{}", env!("CARGO_PKG_VERSION")),
            timeout_secs: 20,
            retries: 3,
            backoff_ms: 1000,
            max_retry_after_secs: 60,
            per_host_concurrency: 2,
            per_host_interval_ms: 500,
            cache_max_age_hours: 24,
            max_concurrency: 64,
            max_redirects: 10,
            include_private: false,
            allow_private_hosts: Vec::new(),
            unverifiable_hosts: Vec::new(),
        }
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawTaxonomies {
    #[serde(default)]
    pub(super) frameworks: Option<TaxonomyConfig>,
    #[serde(default)]
    pub(super) tools: Option<TaxonomyConfig>,
    #[serde(default)]
    pub(super) tags: Option<TaxonomyConfig>,
}

/// One taxonomy's settings.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct TaxonomyConfig {
    /// Heading of the taxonomy's list page.
    pub title: String,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawLinks {
    /// Add `nofollow` to every external link.
    #[serde(default)]
    pub(super) external_nofollow: bool,
    /// Rules that recognise affiliate links.
    #[serde(default)]
    pub(super) affiliate: Vec<Spanned<AffiliateRule>>,
}

/// A link is an affiliate link when its host is one of `hosts` (or a
/// subdomain of one) and its query string carries one of `params`. A rule
/// without `params` makes every link to its hosts an affiliate link: short
/// links such as `amzn.to/3AbCdEf` or `geni.us/x` carry no query at all.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct AffiliateRule {
    /// A short name for messages, such as `amazon`.
    pub name: String,
    /// Registrable hosts, such as `amazon.com`; subdomains match too.
    pub hosts: Vec<String>,
    /// Query parameters that carry the affiliate id, such as `tag`. Empty
    /// (or left out): every link to `hosts` is an affiliate link.
    #[serde(default)]
    pub params: Vec<String>,
    /// The site's own ids (values of `params`), such as `sparecables-20`.
    /// When set, `errata check` warns about a link carrying another id,
    /// and about a link to the rule's host that carries none.
    #[serde(default)]
    pub ids: Vec<String>,
}

/// The affiliate disclosure texts.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Disclosure {
    /// Shown on every page with a sponsored link, before the first one.
    #[serde(default = "default_disclosure")]
    pub text: String,
    /// Added when an Amazon affiliate link is on the page.
    #[serde(default = "default_amazon")]
    pub amazon: String,
}

impl Default for Disclosure {
    fn default() -> Self {
        Disclosure {
            text: default_disclosure(),
            amazon: default_amazon(),
        }
    }
}

fn default_disclosure() -> String {
    "Some links on this page are affiliate links: we may earn a commission if you buy through them, at no extra cost to you.".into()
}
fn default_amazon() -> String {
    "As an Amazon Associate I earn from qualifying purchases.".into()
}
