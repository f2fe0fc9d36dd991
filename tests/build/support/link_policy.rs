//! The link policy, checked on one built page: affiliate links are
//! `sponsored noopener` and open in a new tab, and a disclosure comes before
//! the first of them.

use super::*;

/// Whether `href` is a link to one of the affiliate programmes the default
/// site and the `sponsored` fixture name, with its id.
pub fn is_affiliate(href: &str) -> bool {
    (href.contains("amazon.com") && href.contains("tag="))
        || (href.contains("runpod.io") && href.contains("ref="))
        || (href.contains("vast.ai") && href.contains("ref_id="))
}

/// Checks the policy on one built page and returns its parsed document.
pub fn check_policy(html: &str, expect_amazon: bool) -> Html {
    let doc = Html::parse_document(html);
    let links = select(&doc, "a[href]");
    let sponsored: Vec<_> = links
        .iter()
        .filter(|a| {
            a.value()
                .attr("rel")
                .is_some_and(|r| r.split(' ').any(|t| t == "sponsored"))
        })
        .collect();
    for a in &links {
        let href = a.value().attr("href").unwrap();
        if is_affiliate(href) {
            let rel = a.value().attr("rel").unwrap_or_default();
            let mut tokens: Vec<_> = rel.split(' ').collect();
            tokens.sort();
            assert!(
                tokens.contains(&"sponsored") && tokens.contains(&"noopener"),
                "{href}: rel={rel}"
            );
            assert!(!tokens.contains(&"noreferrer"), "{href}");
            assert_eq!(a.value().attr("target"), Some("_blank"), "{href}");
        }
    }
    let disclosures = select(&doc, "[data-disclosure]");
    if let Some(first) = sponsored.first() {
        let disclosure = disclosures
            .first()
            .expect("a page with sponsored links has a disclosure");
        assert!(
            position(&doc, disclosure) < position(&doc, first),
            "disclosure after the first sponsored link"
        );
        let text: String = disclosure.text().collect();
        assert_eq!(
            text.contains("As an Amazon Associate I earn from qualifying purchases."),
            expect_amazon,
            "{text}"
        );
    } else {
        assert!(
            disclosures.is_empty(),
            "a page without sponsored links has no disclosure"
        );
    }
    doc
}
