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

/// Whether `url` leaves the site over `http(s)` (an outbound link).
pub fn is_outbound(url: &str) -> bool {
    let url = url.trim();
    let lower = url.get(..8).unwrap_or(url).to_ascii_lowercase();
    lower.starts_with("http://") || lower.starts_with("https://")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalise_resolves_dots_and_refuses_climbing_out() {
        assert_eq!(normalise("a/b/../c/./d").as_deref(), Some("a/c/d"));
        assert_eq!(normalise("a/../../x"), None);
    }

    fn policy(nofollow: bool) -> LinkPolicy {
        let rules = vec![
            AffiliateRule {
                name: "amazon".into(),
                hosts: vec!["amazon.com".into()],
                params: vec!["tag".into()],
                ids: vec![],
            },
            AffiliateRule {
                name: "vast.ai".into(),
                hosts: vec!["vast.ai".into()],
                params: vec!["ref_id".into(), "ref".into()],
                ids: vec![],
            },
            // Short links carry no query: hosts without params.
            AffiliateRule {
                name: "amazon".into(),
                hosts: vec!["amzn.to".into()],
                params: vec![],
                ids: vec![],
            },
            AffiliateRule {
                name: "geniuslink".into(),
                hosts: vec!["geni.us".into()],
                params: vec![],
                ids: vec![],
            },
        ];
        LinkPolicy {
            base: Url::parse("https://site.example/sub/").unwrap(),
            rules,
            nofollow,
        }
    }

    #[test]
    fn classifies_links_as_a_browser_resolves_them() {
        use LinkKind::*;
        let amazon = Affiliate { amazon: true };
        let vast = Affiliate { amazon: false };
        let p = policy(false);
        // (href as the browser has it after entity decoding, rel, kind)
        let table: &[(&str, Option<&str>, LinkKind)] = &[
            ("/sub/oom/", None, Internal),
            ("#root-cause", None, Internal),
            ("?q=1", None, Internal),
            ("mailto:a@b.c", None, Internal),
            ("https://site.example/sub/x/", None, Internal),
            ("HTTPS://SITE.EXAMPLE./x", None, Internal),
            // Same scheme as the base, no slashes: relative to the base.
            ("https:evil.example/x", None, Internal),
            ("https://github.com/x", None, External),
            ("//github.com/x", None, External),
            ("http:github.com/x", None, External),
            ("https:\\\\github.com\\x", None, External),
            ("https:/\\github.com", None, External),
            (" \t\nhttps://github.com/x", None, External),
            ("ht\ttps://github.com/x", None, External),
            ("https://site.example:8443/", None, External),
            ("https://www.amazon.com/s?k=x&tag=a-20", None, amazon),
            (
                "https://www.amazon.com/dp/B0BG9?th=1&tag=mysite-20",
                None,
                amazon,
            ),
            ("https://amazon.com/dp/B0BG9?tag=a&th=1", None, amazon),
            ("https://WWW.AMAZON.COM/dp/x?tag=a", None, amazon),
            ("https://www.amazon.com./dp/x?tag=a", None, amazon),
            ("https://smile.amazon.com/dp/x?tag=a", None, amazon),
            ("https://www.amazon.com/dp/x?%74ag=a", None, amazon),
            ("https://www.amazon.com/dp/x?TAG=a", None, amazon),
            ("https://www.amazon.com/dp/x?a=1&&tag=a#frag", None, amazon),
            ("//www.amazon.com/dp/x?tag=a", None, amazon),
            ("http:www.amazon.com/dp/x?tag=a", None, amazon),
            ("https:\\\\www.amazon.com\\dp?tag=a", None, amazon),
            ("https://www.amazon.com/s?k=x", None, External),
            ("https://www.amazon.com/s?tag=", None, External),
            ("https://www.amazon.com/s#?tag=a", None, External),
            ("https://notamazon.com/?tag=a", None, External),
            ("https://amazon.com.evil.example/?tag=a", None, External),
            ("https://amzn.to/3AbCdEf", None, amazon),
            ("HTTPS://AMZN.TO./3AbCdEf", None, amazon),
            ("//amzn.to/3AbCdEf?x=1", None, amazon),
            ("https://amzn.top/3AbCdEf", None, External),
            ("https://geni.us/abc", None, vast),
            ("https://notgeni.us/abc", None, External),
            ("https://cloud.vast.ai/?ref_id=1", None, vast),
            ("https://vast.ai/?x=1&ref=abc", None, vast),
            ("https://shop.example/x", Some("Sponsored"), vast),
            ("https://shop.example/x", Some("noopener"), External),
        ];
        for (href, rel, kind) in table {
            assert_eq!(p.classify(href, *rel), *kind, "{href}");
        }
    }

    #[test]
    fn entity_encoded_hrefs_decode_before_they_are_classified() {
        let p = policy(false);
        for raw in [
            "https://www.amazon.com/dp/B0BG9?th=1&amp;tag=mysite-20",
            "https://www.amazon.com/dp/B0BG9?th=1&#38;tag=mysite-20",
            "https://www.amazon.com/dp/B0BG9?th=1&#x26;tag=mysite-20",
            "https&colon;//www.amazon.com/dp?tag=x",
        ] {
            let decoded = decode_attribute(raw);
            assert_eq!(
                p.classify(&decoded, None),
                LinkKind::Affiliate { amazon: true },
                "{raw}"
            );
        }
    }

    #[test]
    fn only_web_mail_and_relative_urls_are_allowed() {
        for ok in [
            "/x",
            "x.html",
            "#a",
            "?q",
            "//h.example/",
            "https://h.example/",
            "HTTP://h",
            "mailto:a@b.c",
            "",
            "a/b:c",
        ] {
            assert_eq!(check_url(ok), Ok(()), "{ok}");
        }
        for (bad, scheme) in [
            ("javascript:alert(1)", "javascript"),
            ("JAVASCRIPT:x", "javascript"),
            (" \u{1}javascript:x", "javascript"),
            ("jav\tascript:x", "javascript"),
            ("java\nscript:x", "javascript"),
            ("data:text/html,x", "data"),
            ("vbscript:x", "vbscript"),
            ("file:///etc/passwd", "file"),
            ("tel:123", "tel"),
        ] {
            assert_eq!(check_url(bad), Err(scheme.to_string()), "{bad:?}");
        }
        for (raw, scheme) in [
            ("&#106;avascript:x", "javascript"),
            ("jav&#x09;ascript:x", "javascript"),
            ("javascript&colon;x", "javascript"),
            ("&#x6A;&#x61;vascript:x", "javascript"),
            ("java&Tab;script:x", "javascript"),
            ("&#0000106avascript:x", "javascript"),
        ] {
            assert_eq!(
                check_url(&decode_attribute(raw)),
                Err(scheme.into()),
                "{raw}"
            );
        }
        // Not a reference without `;` in an attribute: stays text, so relative.
        assert_eq!(check_url(&decode_attribute("javascript&colonx")), Ok(()));
        assert_eq!(
            check_url_attribute("srcset", "/a.png 1x, javascript:x 2x"),
            Err("javascript".into())
        );
        assert_eq!(
            check_url_attribute("srcset", "/a.png 1x, /b.png 2x"),
            Ok(())
        );
        assert_eq!(check_url_attribute("ping", "/a data:x"), Err("data".into()));
    }

    #[test]
    fn merges_rel_without_dropping_author_tokens() {
        let p = policy(true);
        let affiliate = LinkKind::Affiliate { amazon: false };
        assert_eq!(p.rel(affiliate, None).unwrap(), "sponsored noopener");
        assert_eq!(
            p.rel(affiliate, Some("noopener sponsored")).unwrap(),
            "noopener sponsored"
        );
        assert_eq!(
            p.rel(affiliate, Some("me")).unwrap(),
            "me sponsored noopener"
        );
        assert_eq!(
            p.rel(LinkKind::External, Some("noreferrer")).unwrap(),
            "noreferrer noopener nofollow"
        );
        assert_eq!(p.rel(LinkKind::Internal, Some("prev")), None);
        assert_eq!(
            policy(false).rel(LinkKind::External, None).unwrap(),
            "noopener"
        );
    }

    #[test]
    fn ids_are_judged_against_the_sites_own() {
        let mut rules = policy(false).rules;
        rules[0].ids = vec!["mine-20".into()];
        let problem = |url: &str| {
            id_problem(&rules, &Url::parse(url).unwrap()).map(|p| match p {
                IdProblem::Foreign { rule, id } => format!("{}: foreign {id}", rule.name),
                IdProblem::Missing { rule } => format!("{}: missing", rule.name),
            })
        };
        // (url as the browser has it, what is wrong)
        let table: &[(&str, Option<&str>)] = &[
            ("https://www.amazon.com/dp/B0?tag=mine-20", None),
            ("https://www.amazon.com/dp/B0?th=1&TAG=mine-20", None),
            // Another site's id, anywhere in the query, on any subdomain.
            (
                "https://www.amazon.com/dp/B0?th=1&tag=other-20",
                Some("amazon: foreign other-20"),
            ),
            (
                "https://smile.amazon.com/dp/B0?tag=%20other-20",
                Some("amazon: foreign other-20"),
            ),
            (
                "https://AMAZON.com./dp/B0?tag=other-20",
                Some("amazon: foreign other-20"),
            ),
            // Ours among several values is ours.
            ("https://amazon.com/dp/B0?tag=other-20&tag=mine-20", None),
            // No id on the shop itself.
            ("https://www.amazon.com/dp/B0", Some("amazon: missing")),
            ("https://amazon.com/dp/B0?tag=", Some("amazon: missing")),
            // Other services under the shop's domain are not shops.
            ("https://aws.amazon.com/ec2/instance-types/g5/", None),
            // Rules without ids, or without params, say nothing.
            ("https://vast.ai/?ref_id=someone", None),
            ("https://amzn.to/3AbCdEf", None),
            ("https://example.com/?tag=other-20", None),
        ];
        for (url, expected) in table {
            assert_eq!(problem(url).as_deref(), *expected, "{url}");
        }
    }

    #[test]
    fn urls_carried_by_refresh_and_animation_are_found() {
        let attrs = |pairs: &'static [(&'static str, &'static str)]| {
            move |name: &str| {
                pairs
                    .iter()
                    .find(|(n, _)| *n == name)
                    .map(|(_, v)| v.to_string())
            }
        };
        let carried = |element: &str, pairs: &'static [(&'static str, &'static str)]| {
            carried_urls(element, &attrs(pairs))
                .into_iter()
                .map(|(n, u)| format!("{n}={u}"))
                .collect::<Vec<_>>()
        };
        let refresh = |content: &'static str| -> Vec<String> {
            let pairs: &'static [(&str, &str)] =
                Box::leak(Box::new([("http-equiv", " Refresh"), ("content", content)]));
            carried("META", pairs)
        };
        assert_eq!(
            refresh("0; url=javascript:alert(1)"),
            ["content=javascript:alert(1)"]
        );
        assert_eq!(
            refresh("5,URL = 'data:text/html,x'"),
            ["content=data:text/html,x"]
        );
        assert_eq!(refresh("0;javascript:x"), ["content=javascript:x"]);
        assert_eq!(refresh("3"), ["content="]);
        // Other metas carry text, not URLs.
        assert!(
            carried(
                "meta",
                &[("name", "description"), ("content", "Error: CUDA")]
            )
            .is_empty()
        );
        assert_eq!(
            carried(
                "animate",
                &[("attributeName", "href"), ("values", "#a;javascript:x")]
            ),
            ["values=#a", "values=javascript:x"]
        );
        assert_eq!(
            carried("set", &[("to", "javascript:x")]),
            ["to=javascript:x"]
        );
        assert!(carried("a", &[("to", "javascript:x")]).is_empty());
        for (_, url) in carried_urls("set", &attrs(&[("to", "javascript:x")])) {
            assert!(check_url(&url).is_err());
        }
    }
}
