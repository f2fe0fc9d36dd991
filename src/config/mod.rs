//! `site.toml`: parsed into `RawConfig` (unknown keys rejected), then
//! validated once into [`Config`] with absolute paths and a parsed base URL.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::Spanned;
use url::Url;

use crate::diagnostics::{Diagnostic, LineIndex};
use crate::suggest;

mod tables;

pub use tables::{
    AffiliateRule, CheckConfig, Disclosure, ExternalConfig, MarkdownConfig, SearchConfig,
    TaxonomyConfig,
};
use tables::{RawLinks, RawTaxonomies};

/// The name of the configuration file at the site root.
pub const CONFIG_FILE: &str = "site.toml";

/// `site.toml` exactly as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    /// The site's name, shown in the header and the `<title>`.
    title: String,
    /// Absolute URL the site is served from, possibly with a sub-path.
    base_url: Spanned<String>,
    /// Default meta description for pages that have none.
    #[serde(default)]
    description: String,
    /// The `lang` of every page (BCP 47).
    #[serde(default = "default_language")]
    language: Spanned<String>,
    /// Folder name under `themes/`.
    #[serde(default = "default_theme")]
    theme: Spanned<String>,
    /// Author or publisher named in structured data and the feed.
    #[serde(default)]
    author: Option<String>,
    /// How many entries `atom.xml` carries.
    #[serde(default = "default_feed_limit")]
    feed_limit: usize,
    /// Pages per section or term page before paginating.
    #[serde(default = "default_paginate_by")]
    paginate_by: usize,
    /// Display names of the three taxonomies.
    #[serde(default)]
    taxonomies: RawTaxonomies,
    /// Which outbound links are affiliate links, and how external links are marked.
    #[serde(default)]
    links: RawLinks,
    /// The affiliate disclosure shown before the first sponsored link.
    #[serde(default)]
    disclosure: Disclosure,
    /// Settings of `errata check`.
    #[serde(default)]
    check: CheckConfig,
    /// How Markdown is rendered.
    #[serde(default)]
    markdown: MarkdownConfig,
    /// Full-text search.
    #[serde(default)]
    search: SearchConfig,
}

fn default_language() -> Spanned<String> {
    Spanned::new(0..0, "en".into())
}
fn default_theme() -> Spanned<String> {
    Spanned::new(0..0, "default".into())
}
fn default_feed_limit() -> usize {
    20
}
fn default_paginate_by() -> usize {
    20
}

/// The validated site configuration.
#[derive(Debug, Clone)]
pub struct Config {
    /// The site root (the folder holding `site.toml`).
    pub root: PathBuf,
    /// The text of `site.toml` as read (part of the cache's site-wide key).
    pub text: String,
    /// The site's name.
    pub title: String,
    /// Default meta description.
    pub description: String,
    /// The `lang` of every page.
    pub language: String,
    /// Base URL, always ending in `/`.
    pub base_url: Url,
    /// The theme's folder.
    pub theme_dir: PathBuf,
    /// Author or publisher.
    pub author: Option<String>,
    /// Entries in `atom.xml`.
    pub feed_limit: usize,
    /// Pages per list page.
    pub paginate_by: usize,
    /// Taxonomy name → settings, for `frameworks`, `tools` and `tags`.
    pub taxonomies: BTreeMap<&'static str, TaxonomyConfig>,
    /// Add `nofollow` to external links.
    pub external_nofollow: bool,
    /// Affiliate link rules.
    pub affiliate: Vec<AffiliateRule>,
    /// Disclosure texts.
    pub disclosure: Disclosure,
    /// `errata check` settings.
    pub check: CheckConfig,
    /// `[markdown]` settings.
    pub markdown: MarkdownConfig,
    /// `[search]` settings.
    pub search: SearchConfig,
}

/// The taxonomies a page can carry, in display order.
pub const TAXONOMIES: [&str; 3] = ["frameworks", "tools", "tags"];

impl Config {
    /// Reads and validates `site.toml` under `root`.
    pub fn load(root: &Path) -> Result<Config, Vec<Diagnostic>> {
        Config::read(root, true)
    }

    /// As [`Config::load`], for a command that renders nothing (`errata
    /// match`): the theme's folder need not be there (a theme kept in a git
    /// submodule a CI job did not check out).
    pub fn load_for_content(root: &Path) -> Result<Config, Vec<Diagnostic>> {
        Config::read(root, false)
    }

    fn read(root: &Path, theme_needed: bool) -> Result<Config, Vec<Diagnostic>> {
        let path = root.join(CONFIG_FILE);
        let text = std::fs::read_to_string(&path).map_err(|e| {
            vec![Diagnostic::error(
                CONFIG_FILE,
                1,
                1,
                format!("cannot read {}: {e}", path.display()),
            )]
        })?;
        Config::parse_with(root, &text, theme_needed)
    }

    /// Parses and validates the text of `site.toml`.
    pub fn parse(root: &Path, text: &str) -> Result<Config, Vec<Diagnostic>> {
        Config::parse_with(root, text, true)
    }

    fn parse_with(root: &Path, text: &str, theme_needed: bool) -> Result<Config, Vec<Diagnostic>> {
        let index = LineIndex::new(text);
        let at = |offset: usize, message: String| {
            let (line, col) = index.line_col(offset);
            Diagnostic::error(CONFIG_FILE, line, col, message)
        };
        let raw: RawConfig = toml::from_str(text).map_err(|e| {
            let offset = e.span().map_or(0, |s| s.start);
            let message = e.message().trim().to_string();
            let diagnostic = match suggest::unknown_field(&message) {
                Some((message, help)) => at(offset, message).with_help(help),
                None => at(offset, message),
            };
            vec![diagnostic]
        })?;

        let mut errors = Vec::new();
        let base_url = match Url::parse(raw.base_url.get_ref()) {
            Ok(url) if matches!(url.scheme(), "http" | "https") && url.host().is_some() => {
                Some(with_trailing_slash(url))
            }
            Ok(_) => {
                errors.push(at(
                    raw.base_url.span().start,
                    "base_url must be an absolute http(s) URL".into(),
                ));
                None
            }
            Err(e) => {
                errors.push(at(
                    raw.base_url.span().start,
                    format!("base_url is not a valid URL: {e}"),
                ));
                None
            }
        };
        let language = raw.language.get_ref().trim().to_string();
        if language.is_empty()
            || !language
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-')
        {
            errors.push(at(
                raw.language.span().start,
                format!("language `{language}` is not a language tag such as `en` or `pt-BR`"),
            ));
        }
        let theme = raw.theme.get_ref();
        let theme_dir = root.join("themes").join(theme);
        if theme.is_empty() || theme.contains(['/', '\\']) || theme.starts_with('.') {
            errors.push(at(
                raw.theme.span().start,
                format!("theme `{theme}` must be a folder name under themes/"),
            ));
        } else if theme_needed && !theme_dir.join("templates").is_dir() {
            errors.push(at(
                raw.theme.span().start,
                format!(
                    "theme `{theme}` not found: expected {}",
                    theme_dir.join("templates").display()
                ),
            ));
        }
        if raw.paginate_by == 0 {
            errors.push(at(0, "paginate_by must be at least 1".into()));
        }
        for spanned in &raw.links.affiliate {
            let rule = spanned.get_ref();
            let start = spanned.span().start;
            if rule.hosts.is_empty() {
                errors.push(at(
                    start,
                    format!("affiliate rule `{}` needs at least one host", rule.name),
                ));
            }
            if !rule.ids.is_empty() && rule.params.is_empty() {
                errors.push(at(
                    start,
                    format!(
                        "affiliate rule `{}` lists `ids` but no `params`: without a parameter no id can be read from a link",
                        rule.name
                    ),
                ));
            }
        }
        let Some(base_url) = base_url else {
            return Err(errors);
        };
        if !errors.is_empty() {
            return Err(errors);
        }

        let taxonomy = |name: &'static str, given: Option<TaxonomyConfig>| {
            let title = given.map_or_else(|| capitalise(name), |t| t.title);
            (name, TaxonomyConfig { title })
        };
        let taxonomies = BTreeMap::from([
            taxonomy("frameworks", raw.taxonomies.frameworks),
            taxonomy("tools", raw.taxonomies.tools),
            taxonomy("tags", raw.taxonomies.tags),
        ]);
        let affiliate = raw
            .links
            .affiliate
            .into_iter()
            .map(|spanned| {
                let mut rule = spanned.into_inner();
                rule.hosts.iter_mut().for_each(|h| *h = normalise_host(h));
                rule
            })
            .collect();
        Ok(Config {
            root: root.to_path_buf(),
            text: text.to_string(),
            title: raw.title,
            description: raw.description,
            language,
            base_url,
            theme_dir,
            author: raw.author,
            feed_limit: raw.feed_limit,
            paginate_by: raw.paginate_by,
            taxonomies,
            external_nofollow: raw.links.external_nofollow,
            affiliate,
            disclosure: raw.disclosure,
            check: raw.check,
            markdown: raw.markdown,
            search: raw.search,
        })
    }

    /// Replaces the base URL (for `--base-url` preview deploys).
    pub fn set_base_url(&mut self, url: &str) -> Result<(), String> {
        let url = Url::parse(url).map_err(|e| format!("--base-url is not a valid URL: {e}"))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err("--base-url must be an absolute http(s) URL".into());
        }
        self.base_url = with_trailing_slash(url);
        Ok(())
    }

    /// The path part of the base URL, such as `/` or `/triage/`.
    pub fn base_path(&self) -> &str {
        self.base_url.path()
    }

    /// The absolute URL of a site path such as `oom/cuda-out-of-memory/`.
    pub fn absolute(&self, site_path: &str) -> String {
        format!("{}{}", self.base_url, site_path.trim_start_matches('/'))
    }

    /// The content folder.
    pub fn content_dir(&self) -> PathBuf {
        self.root.join("content")
    }
}

fn with_trailing_slash(mut url: Url) -> Url {
    url.set_query(None);
    url.set_fragment(None);
    if !url.path().ends_with('/') {
        let path = format!("{}/", url.path());
        url.set_path(&path);
    }
    url
}

/// An affiliate rule's host as links are compared with it: lowercase,
/// without `www.` (subdomains match anyway) or a trailing dot.
fn normalise_host(host: &str) -> String {
    let host = host.trim().to_ascii_lowercase();
    let host = host.strip_suffix('.').unwrap_or(&host);
    host.strip_prefix("www.").unwrap_or(host).to_string()
}

fn capitalise(name: &str) -> String {
    let mut chars = name.chars();
    chars
        .next()
        .map(|c| c.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Config, Vec<Diagnostic>> {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        Config::parse(root, text)
    }

    #[test]
    fn unknown_key_names_key_and_location() {
        let errors = parse("title = \"x\"\nbase_url = \"https://e.com\"\ntitel = 1\n").unwrap_err();
        assert_eq!(errors.len(), 1);
        let e = &errors[0];
        assert_eq!((e.line, e.col), (3, 1));
        assert_eq!(e.message, "unknown key `titel`");
        assert!(
            e.help
                .as_deref()
                .unwrap()
                .starts_with("did you mean `title`?")
        );
    }

    #[test]
    fn nested_unknown_key_is_located() {
        let errors = parse(
            "title = \"x\"\nbase_url = \"https://e.com\"\n[links]\nexternal_nofolow = true\n",
        )
        .unwrap_err();
        assert_eq!((errors[0].line, errors[0].col), (4, 1));
        assert!(
            errors[0]
                .help
                .as_deref()
                .unwrap()
                .contains("external_nofollow")
        );
    }

    #[test]
    fn base_url_gets_trailing_slash_and_sub_path() {
        let config =
            parse("title = \"x\"\nbase_url = \"https://user.github.io/triage\"\n").unwrap();
        assert_eq!(config.base_url.as_str(), "https://user.github.io/triage/");
        assert_eq!(config.base_path(), "/triage/");
        assert_eq!(
            config.absolute("/oom/"),
            "https://user.github.io/triage/oom/"
        );
    }

    #[test]
    fn bad_base_url_is_located_at_its_value() {
        let errors = parse("title = \"x\"\nbase_url = \"not a url\"\n").unwrap_err();
        assert_eq!((errors[0].line, errors[0].col), (2, 12));
    }

    #[test]
    fn affiliate_hosts_are_normalised() {
        assert_eq!(normalise_host(" WWW.Amazon.COM. "), "amazon.com");
        assert_eq!(normalise_host("smile.amazon.de"), "smile.amazon.de");
    }

    #[test]
    fn an_affiliate_rule_may_list_hosts_without_params_but_needs_a_host() {
        let base = "title = \"x\"\nbase_url = \"https://e.com\"\n";
        let short =
            format!("{base}[[links.affiliate]]\nname = \"amazon\"\nhosts = [\"amzn.to\"]\n");
        let config = parse(&short).unwrap();
        assert!(config.affiliate[0].params.is_empty());
        let hostless =
            format!("{base}[[links.affiliate]]\nname = \"x\"\nhosts = []\nparams = [\"tag\"]\n");
        let errors = parse(&hostless).unwrap_err();
        assert!(
            errors[0].message.contains("needs at least one host"),
            "{:?}",
            errors[0]
        );
        // Located at the rule's header, not at the top of the file.
        assert_eq!(errors[0].line, 3, "{:?}", errors[0]);
    }

    #[test]
    fn an_affiliate_rule_may_name_the_sites_ids_only_with_params() {
        let base = "title = \"x\"\nbase_url = \"https://e.com\"\n";
        let good = format!(
            "{base}[[links.affiliate]]\nname = \"amazon\"\nhosts = [\"amazon.com\"]\nparams = [\"tag\"]\nids = [\"me-20\"]\n"
        );
        assert_eq!(parse(&good).unwrap().affiliate[0].ids, ["me-20"]);
        let paramless = format!(
            "{base}\n[[links.affiliate]]\nname = \"short\"\nhosts = [\"amzn.to\"]\nids = [\"me-20\"]\n"
        );
        let errors = parse(&paramless).unwrap_err();
        assert!(
            errors[0].message.contains("lists `ids` but no `params`"),
            "{:?}",
            errors[0]
        );
        assert_eq!(errors[0].line, 4, "{:?}", errors[0]);
    }

    #[test]
    fn search_is_off_unless_turned_on() {
        let base = "title = \"t\"\nbase_url = \"https://example.com/\"\n";
        assert!(!parse(base).unwrap().search.enabled);
        let on = format!("{base}[search]\nenabled = true\n");
        assert!(parse(&on).unwrap().search.enabled);
        let typo = format!("{base}[search]\nenable = false\n");
        assert!(parse(&typo).is_err());
    }

    #[test]
    fn markdown_html_is_sanitised_unless_opted_out() {
        let base = "title = \"x\"\nbase_url = \"https://e.com\"\n";
        assert!(!parse(base).unwrap().markdown.unsafe_html);
        let opted = format!("{base}[markdown]\nunsafe_html = true\n");
        assert!(parse(&opted).unwrap().markdown.unsafe_html);
    }
}
