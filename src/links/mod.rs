//! The link policy: which URLs may appear at all, which links are internal,
//! external or affiliate, and the `rel` and `target` each kind gets. Pure;
//! the markdown and finish stages apply it.
//!
//! Every URL is judged the way a browser reads it: an attribute value is
//! entity-decoded first ([`decode_attribute`]), then tabs and newlines are
//! dropped and leading and trailing control characters and spaces trimmed,
//! then the URL is parsed by the WHATWG rules (the `url` crate) against the
//! site's base URL. So `jav&#x09;ascript:`, `https:\\evil.example` and
//! `?th=1&amp;tag=x` mean here what they mean in a browser.

use std::borrow::Cow;

use url::Url;

use crate::config::{AffiliateRule, Config};

/// Schemes a URL in the output may carry. A URL without a scheme (relative,
/// `//host`, `/path`, `?query` or `#fragment`) is allowed too.
pub const ALLOWED_SCHEMES: [&str; 3] = ["http", "https", "mailto"];

/// Attributes whose value is a URL, or a list of URLs (`srcset`, `ping`,
/// `archive`), in HTML and SVG.
pub const URL_ATTRIBUTES: [&str; 20] = [
    "href",
    "src",
    "xlink:href",
    "action",
    "formaction",
    "poster",
    "srcset",
    "imagesrcset",
    "cite",
    "data",
    "background",
    "codebase",
    "longdesc",
    "manifest",
    "ping",
    "profile",
    "usemap",
    "icon",
    "classid",
    "archive",
];

/// Decodes character references in an attribute value as a browser does
/// (`&#106;`, `&colon;`, `&amp;`, and legacy references without `;`).
pub fn decode_attribute(value: &str) -> Cow<'_, str> {
    htmlize::unescape_attribute(value)
}

/// A URL as a browser sees it before parsing: ASCII tabs and newlines
/// removed anywhere, C0 controls and spaces trimmed from both ends.
fn browser_clean(url: &str) -> Cow<'_, str> {
    let trimmed = url.trim_matches(|c: char| c <= ' ');
    if trimmed.contains(['\t', '\n', '\r']) {
        Cow::Owned(trimmed.replace(['\t', '\n', '\r'], ""))
    } else {
        Cow::Borrowed(trimmed)
    }
}

/// The scheme of `url` (already entity-decoded), lowercased, as a browser
/// would find it; `None` for a relative URL.
pub fn scheme(url: &str) -> Option<String> {
    let url = browser_clean(url);
    let (head, _) = url.split_once(':')?;
    let mut chars = head.chars();
    let first_ok = chars.next().is_some_and(|c| c.is_ascii_alphabetic());
    (first_ok && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.')))
        .then(|| head.to_ascii_lowercase())
}

/// Checks that `url` (already entity-decoded) is `http(s)`, `mailto`,
/// relative or a fragment. `Err` carries the scheme that is not allowed.
pub fn check_url(url: &str) -> Result<(), String> {
    match scheme(url) {
        Some(s) if !ALLOWED_SCHEMES.contains(&s.as_str()) => Err(s),
        _ => Ok(()),
    }
}

/// Checks each URL of an attribute value (already entity-decoded):
/// `srcset` and `imagesrcset` hold comma-separated candidates, `ping` and
/// `archive` space-separated URLs, the rest one URL.
pub fn check_url_attribute(name: &str, value: &str) -> Result<(), String> {
    match name {
        "srcset" | "imagesrcset" => value
            .split(',')
            .map(|candidate| candidate.split_ascii_whitespace().next().unwrap_or(""))
            .try_for_each(check_url),
        "ping" | "archive" => value.split_ascii_whitespace().try_for_each(check_url),
        _ => check_url(value),
    }
}

/// URLs that an element carries outside the URL attributes, as
/// `(attribute, url)`: the target of a `<meta http-equiv=refresh>`
/// (`content="0; url=..."`), and the values an SVG animation (`<animate>`,
/// `<set>`...) writes into another attribute, which may be `href`.
/// `attribute` gives an attribute's value, entity-decoded.
pub fn carried_urls(
    element: &str,
    attribute: &dyn Fn(&str) -> Option<String>,
) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    match element.to_ascii_lowercase().as_str() {
        "meta" => {
            let refresh =
                attribute("http-equiv").is_some_and(|v| v.trim().eq_ignore_ascii_case("refresh"));
            if let Some(content) = attribute("content").filter(|_| refresh) {
                out.push(("content", refresh_url(&content).to_string()));
            }
        }
        "animate" | "set" | "animatemotion" | "animatetransform" => {
            for name in ["to", "from", "by"] {
                if let Some(value) = attribute(name) {
                    out.push((name, value));
                }
            }
            if let Some(values) = attribute("values") {
                out.extend(values.split(';').map(|v| ("values", v.to_string())));
            }
        }
        _ => {}
    }
    out
}

/// The URL of a refresh's `content`, read as the HTML standard's "shared
/// declarative refresh steps" read it: a time, then `;` or `,`, then
/// optionally `url=`, then the URL, optionally quoted.
fn refresh_url(content: &str) -> &str {
    let rest = content.trim_start_matches(|c: char| c.is_ascii_whitespace());
    let rest = rest.trim_start_matches(|c: char| c.is_ascii_digit() || c == '.');
    let rest = rest.trim_start_matches(|c: char| c.is_ascii_whitespace());
    let rest = rest.strip_prefix([';', ',']).unwrap_or(rest);
    let rest = rest.trim_start_matches(|c: char| c.is_ascii_whitespace());
    let rest = match rest.get(..3) {
        Some(u) if u.eq_ignore_ascii_case("url") => {
            let after = rest[3..].trim_start_matches(|c: char| c.is_ascii_whitespace());
            match after.strip_prefix('=') {
                Some(after) => after.trim_start_matches(|c: char| c.is_ascii_whitespace()),
                None => rest,
            }
        }
        _ => rest,
    };
    match rest.chars().next() {
        Some(q @ ('"' | '\'')) => {
            let inner = &rest[1..];
            &inner[..inner.find(q).unwrap_or(inner.len())]
        }
        _ => rest,
    }
}

/// What kind of link an `href` is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkKind {
    /// Same site, relative, fragment-only, or not a web link (`mailto:`).
    Internal,
    /// Another site.
    External,
    /// An affiliate link: matched by a rule or marked `rel="sponsored"`.
    Affiliate {
        /// Matched the rule named `amazon`.
        amazon: bool,
    },
}

/// The site's link policy.
#[derive(Debug, Clone)]
pub struct LinkPolicy {
    base: Url,
    rules: Vec<AffiliateRule>,
    nofollow: bool,
}

impl LinkPolicy {
    /// The policy configured in `site.toml`.
    pub fn new(config: &Config) -> LinkPolicy {
        LinkPolicy {
            base: config.base_url.clone(),
            rules: config.affiliate.clone(),
            nofollow: config.external_nofollow,
        }
    }

    /// Classifies a link to `url`, given the author's `rel` if any. `url` is
    /// the link as a browser has it: entity-decoded (use
    /// [`decode_attribute`] on a value read from HTML).
    pub fn classify(&self, url: &str, rel: Option<&str>) -> LinkKind {
        // Resolved against the base exactly as a browser resolves it, so
        // `http:host/x`, `https:\\host` and `//host` land on their real host.
        let Ok(url) = self.base.join(&browser_clean(url)) else {
            return LinkKind::Internal;
        };
        if !matches!(url.scheme(), "http" | "https") {
            return LinkKind::Internal;
        }
        let marked = rel.is_some_and(|r| {
            r.split_ascii_whitespace()
                .any(|t| t.eq_ignore_ascii_case("sponsored"))
        });
        match self.rules.iter().find(|rule| rule_matches(rule, &url)) {
            Some(rule) => LinkKind::Affiliate {
                amazon: rule.name.eq_ignore_ascii_case("amazon"),
            },
            None if marked => LinkKind::Affiliate { amazon: false },
            None if same_host(&url, &self.base) => LinkKind::Internal,
            None => LinkKind::External,
        }
    }

    /// The `rel` a link of `kind` must carry: the author's tokens, kept in
    /// order, plus what the policy adds. `None` leaves the attribute alone.
    pub fn rel(&self, kind: LinkKind, existing: Option<&str>) -> Option<String> {
        let added: &[&str] = match kind {
            LinkKind::Internal => return None,
            // No `noreferrer`: some affiliate networks need the referrer.
            LinkKind::Affiliate { .. } => &["sponsored", "noopener"],
            LinkKind::External if self.nofollow => &["noopener", "nofollow"],
            LinkKind::External => &["noopener"],
        };
        let mut tokens: Vec<String> = existing
            .unwrap_or("")
            .split_ascii_whitespace()
            .map(str::to_string)
            .collect();
        for token in added {
            if !tokens.iter().any(|t| t.eq_ignore_ascii_case(token)) {
                tokens.push((*token).to_string());
            }
        }
        Some(tokens.join(" "))
    }
}

/// A host without the trailing dot of a fully qualified name
/// (`amazon.com.` is `amazon.com`). The `url` crate has lowercased it.
fn host_of(url: &Url) -> Option<&str> {
    url.host_str().map(|h| h.strip_suffix('.').unwrap_or(h))
}

fn same_host(a: &Url, b: &Url) -> bool {
    host_of(a) == host_of(b) && a.port_or_known_default() == b.port_or_known_default()
}

/// True when `url` is an affiliate link under `rule`: its host is one of
/// the rule's hosts or a subdomain of one (`www.`, `smile.`), and one of the
/// rule's parameters has a value anywhere in its query. Parameter names are
/// percent-decoded and compared without regard to case: marking a link
/// sponsored when in doubt is safe, missing one is a compliance failure.
pub fn rule_matches(rule: &AffiliateRule, url: &Url) -> bool {
    let Some(host) = host_of(url) else {
        return false;
    };
    // A rule without params (short links) takes every link to its hosts.
    rule_host(rule, host).is_some()
        && (rule.params.is_empty() || ids_in(rule, url).next().is_some())
}

/// The rule's host that `host` is, or is a subdomain of.
fn rule_host<'r>(rule: &'r AffiliateRule, host: &str) -> Option<&'r str> {
    rule.hosts
        .iter()
        .find(|h| {
            host == h.as_str()
                || host
                    .strip_suffix(h.as_str())
                    .is_some_and(|rest| rest.ends_with('.'))
        })
        .map(String::as_str)
}

/// The non-empty values of the rule's id parameters in `url`'s query.
fn ids_in<'u>(rule: &'u AffiliateRule, url: &'u Url) -> impl Iterator<Item = String> + 'u {
    url.query_pairs().filter_map(|(k, v)| {
        let v = v.trim();
        (!v.is_empty() && rule.params.iter().any(|p| p.eq_ignore_ascii_case(k.trim())))
            .then(|| v.to_string())
    })
}

/// What is wrong with the id on a link, under a rule that names the
/// site's own `ids`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IdProblem<'r> {
    /// The link carries an id that is not one of the site's own.
    Foreign {
        /// The rule, for messages.
        rule: &'r AffiliateRule,
        /// The id found.
        id: String,
    },
    /// A link to the rule's own host (or its `www.`) carries no id at all.
    /// Other subdomains (`aws.amazon.com`) are other services, not shops.
    Missing {
        /// The rule, for messages.
        rule: &'r AffiliateRule,
    },
}

/// The first problem with the affiliate id of `url` under `rules` that name
/// the site's own ids. Ids are compared exactly, as the networks issue them.
pub fn id_problem<'r>(rules: &'r [AffiliateRule], url: &Url) -> Option<IdProblem<'r>> {
    let host = host_of(url)?;
    rules
        .iter()
        .filter(|r| !r.ids.is_empty() && !r.params.is_empty())
        .find_map(|rule| {
            let own = rule_host(rule, host)?;
            let found: Vec<String> = ids_in(rule, url).collect();
            if found.iter().any(|id| rule.ids.contains(id)) {
                None
            } else if let Some(id) = found.into_iter().next() {
                Some(IdProblem::Foreign { rule, id })
            } else if host == own || host.strip_prefix("www.") == Some(own) {
                Some(IdProblem::Missing { rule })
            } else {
                None
            }
        })
}

/// Decodes `%XX` escapes; `None` for malformed ones or invalid UTF-8.
pub(crate) fn percent_decode(path: &str) -> Option<String> {
    let bytes = path.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// Resolves `.` and `..` in a `/`-separated relative path; `None` if it
/// climbs above its root.
pub(crate) fn normalise(path: &str) -> Option<String> {
    let mut parts: Vec<&str> = Vec::new();
    for segment in path.split('/') {
        match segment {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            s => parts.push(s),
        }
    }
    Some(parts.join("/"))
}

/// Whether `url` (entity-decoded) may leave the site over `http(s)`: it
/// names the scheme (`https://host`, `HTTP:host`, `https:\\host`), or a
/// host without one (`//host`, `\\host`). Which of them do, and where
/// to, only the site's base URL says: see [`outbound_url`].
pub fn is_outbound(url: &str) -> bool {
    let clean = browser_clean(url);
    let scheme_relative = clean.len() >= 2
        && clean.as_bytes()[..2]
            .iter()
            .all(|b| matches!(b, b'/' | b'\\'));
    scheme_relative || matches!(scheme(&clean).as_deref(), Some("http" | "https"))
}

/// Where an outbound link to `url` (entity-decoded, [`is_outbound`]) goes,
/// as a browser resolves it against the site's `base`: the URL as written
/// when it is written in full, else the one the browser goes to
/// (`//host/x` → `https://host/x`). `None` when it stays on the site
/// without naming a host (`https:page` under an `https` base is a relative
/// path) or leaves the web.
pub fn outbound_url(base: &Url, url: &str) -> Option<String> {
    let clean = browser_clean(url);
    let resolved = base.join(&clean).ok()?;
    if !matches!(resolved.scheme(), "http" | "https") {
        return None;
    }
    let lower = clean.get(..8).unwrap_or(&clean).to_ascii_lowercase();
    let in_full = lower.starts_with("http://") || lower.starts_with("https://");
    let as_written = Url::parse(&clean)
        .ok()
        .filter(|u| in_full && *u == resolved);
    match as_written {
        Some(_) => Some(clean.into_owned()),
        None if same_host(&resolved, base) => None,
        None => Some(resolved.into()),
    }
}

#[cfg(test)]
mod tests;
