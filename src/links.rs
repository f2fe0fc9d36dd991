//! The link policy: which links are internal, external or affiliate, and the
//! `rel` and `target` each kind gets. Pure; the finish stage applies it.

use url::Url;

use crate::config::{AffiliateRule, Config};

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

    /// Classifies `href`, given the author's `rel` if any.
    pub fn classify(&self, href: &str, rel: Option<&str>) -> LinkKind {
        let href = href.trim();
        let absolute = href.contains("://") || href.starts_with("//");
        if !absolute {
            return LinkKind::Internal;
        }
        let Ok(url) = self.base.join(href) else {
            return LinkKind::External;
        };
        if !matches!(url.scheme(), "http" | "https") {
            return LinkKind::Internal;
        }
        let marked = rel.is_some_and(|r| {
            r.split_ascii_whitespace()
                .any(|t| t.eq_ignore_ascii_case("sponsored"))
        });
        match self.rules.iter().find(|rule| rule.matches(&url)) {
            Some(rule) => LinkKind::Affiliate {
                amazon: rule.name.eq_ignore_ascii_case("amazon"),
            },
            None if marked => LinkKind::Affiliate { amazon: false },
            None if url.host_str() == self.base.host_str()
                && url.port_or_known_default() == self.base.port_or_known_default() =>
            {
                LinkKind::Internal
            }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(nofollow: bool) -> LinkPolicy {
        let rules = vec![
            AffiliateRule {
                name: "amazon".into(),
                hosts: vec!["amazon.com".into()],
                params: vec!["tag".into()],
            },
            AffiliateRule {
                name: "vast.ai".into(),
                hosts: vec!["vast.ai".into()],
                params: vec!["ref_id".into(), "ref".into()],
            },
        ];
        LinkPolicy {
            base: Url::parse("https://site.example/sub/").unwrap(),
            rules,
            nofollow,
        }
    }

    #[test]
    fn classifies_links() {
        let p = policy(false);
        assert_eq!(p.classify("/sub/oom/", None), LinkKind::Internal);
        assert_eq!(p.classify("#root-cause", None), LinkKind::Internal);
        assert_eq!(p.classify("mailto:a@b.c", None), LinkKind::Internal);
        assert_eq!(
            p.classify("https://site.example/sub/x/", None),
            LinkKind::Internal
        );
        assert_eq!(p.classify("https://github.com/x", None), LinkKind::External);
        assert_eq!(
            p.classify("https://www.amazon.com/s?k=x&tag=a-20", None),
            LinkKind::Affiliate { amazon: true }
        );
        assert_eq!(
            p.classify("https://www.amazon.com/s?k=x", None),
            LinkKind::External
        );
        assert_eq!(
            p.classify("https://cloud.vast.ai/?ref_id=1", None),
            LinkKind::Affiliate { amazon: false }
        );
        assert_eq!(
            p.classify("https://shop.example/x", Some("Sponsored")),
            LinkKind::Affiliate { amazon: false }
        );
        assert_eq!(p.classify("//github.com/x", None), LinkKind::External);
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
}
