//! Stage 5, `finish`: the link policy on every `<a>` of the final HTML
//! (wherever it came from: front matter, Markdown, raw HTML or templates),
//! the affiliate disclosure guarantee, and JSON-LD validation. The only
//! module that knows lol_html.

use std::cell::{Cell, RefCell};

use lol_html::html_content::ContentType;
use lol_html::{RewriteStrSettings, element, rewrite_str, text};

use crate::config::Disclosure;
use crate::jsonld;
use crate::links::{self, LinkKind, LinkPolicy, URL_ATTRIBUTES};

/// What finishing needs besides the HTML.
pub struct FinishContext<'a> {
    /// The site's link policy.
    pub policy: &'a LinkPolicy,
    /// The disclosure texts.
    pub disclosure: &'a Disclosure,
    /// Node types the page's single JSON-LD graph must hold; `None` for
    /// pages without structured data (404, redirects).
    pub jsonld: Option<&'a [&'a str]>,
}

/// Counts from finishing one page.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct FinishStats {
    /// Every `id` in the page, in document order.
    pub ids: Vec<String>,
    /// Every link target (`href` of `<a>` and `<link>`, `src` of
    /// `<script>`, `<img>`, `<source>` and `<iframe>`) as written, in
    /// document order.
    pub links: Vec<String>,
    /// Ids that appear more than once, sorted.
    pub duplicate_ids: Vec<String>,
    /// Affiliate links on the page.
    pub affiliate_links: usize,
    /// The disclosure had to be inserted because the template put none before the first affiliate link.
    pub disclosure_inserted: bool,
}

#[derive(Default)]
struct Scan {
    first_affiliate: Option<usize>,
    amazon: bool,
    disclosure_at: Option<usize>,
    amazon_disclosure_at: Option<usize>,
    affiliate_links: usize,
    scripts: Vec<String>,
    errors: Vec<String>,
    ids: Vec<String>,
    links: Vec<String>,
}

/// The elements whose link target [`FinishStats::links`] records.
const LINKS: &str = "a[href], link[href], script[src], img[src], source[src], iframe[src]";

/// A selector for every element that carries a URL attribute.
fn url_selector() -> String {
    URL_ATTRIBUTES
        .iter()
        .map(|name| format!("[{}]", name.replace(':', "\\:")))
        .collect::<Vec<_>>()
        .join(",")
}

/// The `href` of a link as a browser reads it, or `None` if there is none.
fn decoded_href(el: &lol_html::html_content::Element<'_, '_>) -> Option<String> {
    el.get_attribute("href")
        .map(|h| links::decode_attribute(&h).into_owned())
}

/// Applies the link policy and checks the page. Returns the rewritten HTML,
/// or every problem found.
pub fn finish(html: &str, ctx: &FinishContext<'_>) -> Result<(String, FinishStats), Vec<String>> {
    let scan = RefCell::new(Scan::default());
    let selector = url_selector();
    let order = Cell::new(0usize);
    let tick = || {
        order.set(order.get() + 1);
        order.get()
    };
    let rewritten = rewrite_str(
        html,
        RewriteStrSettings::new()
            .append_element_content_handler(element!("[id]", |el| {
                if let Some(id) = el.get_attribute("id") {
                    scan.borrow_mut().ids.push(id);
                }
                Ok(())
            }))
            .append_element_content_handler(element!(LINKS, |el| {
                if let Some(target) = el.get_attribute(link_attribute(el)) {
                    scan.borrow_mut().links.push(target);
                }
                Ok(())
            }))
            .append_element_content_handler(element!("[data-disclosure]", |_el| {
                let at = tick();
                let mut s = scan.borrow_mut();
                s.disclosure_at.get_or_insert(at);
                Ok(())
            }))
            .append_element_content_handler(element!("[data-disclosure-amazon]", |_el| {
                let at = tick();
                scan.borrow_mut().amazon_disclosure_at.get_or_insert(at);
                Ok(())
            }))
            // First: no URL that is not allowed survives, whatever wrote it.
            // Values are judged entity-decoded, as the browser (and the
            // minifier, which decodes them) reads them.
            .append_element_content_handler(element!(selector.as_str(), |el| {
                for name in URL_ATTRIBUTES {
                    let Some(value) = el.get_attribute(name) else {
                        continue;
                    };
                    let decoded = links::decode_attribute(&value);
                    if links::check_url_attribute(name, &decoded).is_err() {
                        scan.borrow_mut().errors.push(format!(
                            "`{name}=\"{}\"` in the rendered page (from a template or raw HTML): only http(s), mailto, relative and #fragment URLs are allowed",
                            decoded.trim()
                        ));
                        el.remove_attribute(name);
                    }
                }
                Ok(())
            }))
            .append_element_content_handler(element!(
                "meta[http-equiv][content], animate, set, animateMotion, animateTransform",
                |el| {
                    let tag = el.tag_name();
                    let value_of = |name: &str| {
                        el.get_attribute(name)
                            .map(|v| links::decode_attribute(&v).into_owned())
                    };
                    let bad: Vec<(&str, String)> = links::carried_urls(&tag, &value_of)
                        .into_iter()
                        .filter(|(_, url)| links::check_url(url).is_err())
                        .collect();
                    for (name, url) in bad {
                        scan.borrow_mut().errors.push(format!(
                            "`{name}` of `<{tag}>` carries `{}` in the rendered page (from a template or raw HTML): only http(s), mailto, relative and #fragment URLs are allowed",
                            url.trim()
                        ));
                        el.remove_attribute(name);
                    }
                    Ok(())
                }
            ))
            .append_element_content_handler(element!("a[href]", |el| {
                let at = tick();
                let href = decoded_href(el).unwrap_or_default();
                let mut s = scan.borrow_mut();
                let rel = el.get_attribute("rel");
                let kind = ctx.policy.classify(&href, rel.as_deref());
                if let Some(new_rel) = ctx.policy.rel(kind, rel.as_deref()) {
                    el.set_attribute("rel", &new_rel)?;
                }
                if let LinkKind::Affiliate { amazon } = kind {
                    el.set_attribute("target", "_blank")?;
                    s.affiliate_links += 1;
                    s.amazon |= amazon;
                    s.first_affiliate.get_or_insert(at);
                }
                Ok(())
            }))
            .append_element_content_handler(element!("script[type='application/ld+json']", |_el| {
                scan.borrow_mut().scripts.push(String::new());
                Ok(())
            }))
            .append_element_content_handler(text!("script[type='application/ld+json']", |t| {
                if let Some(last) = scan.borrow_mut().scripts.last_mut() {
                    last.push_str(t.as_str());
                }
                Ok(())
            })),
    )
    .map_err(|e| vec![format!("cannot process the rendered HTML: {e}")])?;

    let mut scan = scan.into_inner();
    let mut sorted = scan.ids.clone();
    sorted.sort();
    let mut duplicate_ids: Vec<String> = sorted
        .windows(2)
        .filter(|w| w[0] == w[1])
        .map(|w| w[0].clone())
        .collect();
    duplicate_ids.dedup();
    let mut stats = FinishStats {
        duplicate_ids,
        ids: std::mem::take(&mut scan.ids),
        links: std::mem::take(&mut scan.links),
        affiliate_links: scan.affiliate_links,
        disclosure_inserted: false,
    };

    if let Some(wanted) = ctx.jsonld {
        match scan.scripts.as_slice() {
            [one] => {
                if let Err(e) = jsonld::validate(one, wanted) {
                    scan.errors.push(e);
                }
            }
            [] => scan
                .errors
                .push("the page has no <script type=\"application/ld+json\">".into()),
            many => scan.errors.push(format!(
                "the page has {} JSON-LD scripts; it must have exactly one",
                many.len()
            )),
        }
    }
    if !scan.errors.is_empty() {
        return Err(scan.errors);
    }

    // The disclosure must come before the first affiliate link; the Amazon
    // sentence too when an Amazon link is on the page.
    let Some(first) = scan.first_affiliate else {
        return Ok((rewritten, stats));
    };
    let before = |at: Option<usize>| at.is_some_and(|at| at < first);
    let need_text = !before(scan.disclosure_at);
    let need_amazon = scan.amazon && !before(scan.amazon_disclosure_at);
    if !need_text && !need_amazon {
        return Ok((rewritten, stats));
    }
    let mut notice =
        String::from("<span class=\"disclosure disclosure-inline\" role=\"note\" data-disclosure>");
    if need_text {
        notice.push_str(&crate::escape::html(&ctx.disclosure.text));
    }
    if need_amazon {
        notice.push_str(" <span data-disclosure-amazon>");
        notice.push_str(&crate::escape::html(&ctx.disclosure.amazon));
        notice.push_str("</span>");
    }
    notice.push_str("</span> ");
    let done = Cell::new(false);
    let policy = ctx.policy;
    let with_notice = rewrite_str(
        &rewritten,
        RewriteStrSettings::new().append_element_content_handler(element!("a[href]", |el| {
            if done.get() {
                return Ok(());
            }
            let href = decoded_href(el).unwrap_or_default();
            if let LinkKind::Affiliate { .. } =
                policy.classify(&href, el.get_attribute("rel").as_deref())
            {
                el.before(&notice, ContentType::Html);
                done.set(true);
            }
            Ok(())
        })),
    )
    .map_err(|e| vec![format!("cannot process the rendered HTML: {e}")])?;
    stats.disclosure_inserted = true;
    Ok((with_notice, stats))
}

/// The link targets ([`FinishStats::links`]) and ids of an HTML file that
/// is not finished (a static file), in document order.
pub fn links_and_ids(html: &str) -> (Vec<String>, Vec<String>) {
    let links = RefCell::new(Vec::new());
    let ids = RefCell::new(Vec::new());
    let _ = rewrite_str(
        html,
        RewriteStrSettings::new()
            .append_element_content_handler(element!(LINKS, |el| {
                if let Some(target) = el.get_attribute(link_attribute(el)) {
                    links.borrow_mut().push(target);
                }
                Ok(())
            }))
            .append_element_content_handler(element!("[id]", |el| {
                if let Some(id) = el.get_attribute("id") {
                    ids.borrow_mut().push(id);
                }
                Ok(())
            })),
    );
    (links.into_inner(), ids.into_inner())
}

/// The attribute that holds an element's link target ([`LINKS`]).
fn link_attribute(el: &lol_html::html_content::Element<'_, '_>) -> &'static str {
    match el.tag_name().as_str() {
        "a" | "link" => "href",
        _ => "src",
    }
}

/// Whether rendered Markdown holds affiliate links, and Amazon ones, so
/// that templates can place the disclosure above the body.
pub fn affiliate_summary(html: &str, policy: &LinkPolicy) -> (bool, bool) {
    let found = Cell::new((false, false));
    let _ = rewrite_str(
        html,
        RewriteStrSettings::new().append_element_content_handler(element!("a[href]", |el| {
            let href = decoded_href(el).unwrap_or_default();
            if let LinkKind::Affiliate { amazon } =
                policy.classify(&href, el.get_attribute("rel").as_deref())
            {
                let (_, any_amazon) = found.get();
                found.set((true, any_amazon || amazon));
            }
            Ok(())
        })),
    );
    found.get()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::AffiliateRule;
    use std::path::Path;

    fn policy() -> LinkPolicy {
        let mut config = crate::config::Config::parse(
            Path::new(env!("CARGO_MANIFEST_DIR")),
            "title = \"t\"\nbase_url = \"https://site.example/\"\n",
        )
        .unwrap();
        config.affiliate = vec![AffiliateRule {
            name: "amazon".into(),
            hosts: vec!["amazon.com".into()],
            params: vec!["tag".into()],
            ids: vec![],
        }];
        LinkPolicy::new(&config)
    }

    fn run(html: &str) -> Result<(String, FinishStats), Vec<String>> {
        let policy = policy();
        let disclosure = Disclosure {
            text: "We earn from links.".into(),
            amazon: "Amazon sentence.".into(),
        };
        finish(
            html,
            &FinishContext {
                policy: &policy,
                disclosure: &disclosure,
                jsonld: None,
            },
        )
    }

    #[test]
    fn rels_and_targets_follow_the_policy() {
        let (out, stats) = run(concat!(
            "<p data-disclosure>We earn. <span data-disclosure-amazon>Amazon.</span></p>",
            "<a href=\"https://www.amazon.com/x?tag=t-20\">a</a>",
            "<a href=\"https://github.com/x\" rel=\"me\">b</a>",
            "<a href=\"/local/\">c</a>",
        ))
        .unwrap();
        assert!(out.contains("<a href=\"https://www.amazon.com/x?tag=t-20\" rel=\"sponsored noopener\" target=\"_blank\">a</a>"), "{out}");
        assert!(
            out.contains("<a href=\"https://github.com/x\" rel=\"me noopener\">b</a>"),
            "{out}"
        );
        assert!(out.contains("<a href=\"/local/\">c</a>"));
        assert_eq!(
            (stats.affiliate_links, stats.disclosure_inserted),
            (1, false)
        );
    }

    #[test]
    fn missing_disclosure_is_inserted_before_the_first_affiliate_link() {
        let (out, stats) = run(
            "<p>Buy <a href=\"https://amazon.com/?tag=x\">here</a></p><p data-disclosure>late</p>",
        )
        .unwrap();
        assert!(stats.disclosure_inserted);
        let notice = out.find("We earn from links.").unwrap();
        let amazon = out.find("Amazon sentence.").unwrap();
        let link = out.find("<a href").unwrap();
        assert!(notice < link && amazon < link, "{out}");
    }

    #[test]
    fn pages_without_affiliate_links_get_no_disclosure() {
        let (out, stats) = run("<a href=\"https://github.com/\">x</a>").unwrap();
        assert!(!out.contains("We earn"));
        assert_eq!(stats.affiliate_links, 0);
    }

    #[test]
    fn urls_that_are_not_allowed_are_errors_however_encoded() {
        let errors = run(concat!(
            "<a href=\" JavaScript:alert(1)\">a</a><iframe src=\"data:text/html,x\"></iframe>",
            "<a href=\"&#106;avascript:x\">b</a><a href=\"jav&#x09;ascript:x\">c</a>",
            "<svg><a xlink:href=\"javascript:x\">d</a></svg><form action=\"vbscript:x\"><button formaction=\"javascript&colon;x\">e</button></form>",
            "<img srcset=\"/a.png 1x, javascript:x 2x\"><video poster=\"data:x\"></video><blockquote cite=\"javascript:x\"></blockquote>",
            "<a href=\"/ok/\">f</a><a href=\"mailto:a@b.c\">g</a><a href=\"#x\">h</a>",
        ))
        .unwrap_err();
        assert_eq!(errors.len(), 10, "{errors:?}");
        for ok in ["/ok/", "mailto:a@b.c", "#x"] {
            assert!(
                errors
                    .iter()
                    .all(|e| !e.starts_with(&format!("`href=\"{ok}"))),
                "{errors:?}"
            );
        }
    }

    #[test]
    fn urls_carried_by_a_refresh_or_an_animation_are_errors_too() {
        let errors = run(concat!(
            "<meta http-equiv=REFRESH content=\"0; url=&#106;avascript:alert(1)\">",
            "<meta name=description content=\"Error: text, not a URL\">",
            "<meta http-equiv=refresh content=\"5; url=/next/\">",
            "<svg><a><animate attributeName=href values=\"#a;javascript:x\"/></a>",
            "<set attributeName=href to=\"data:text/html,x\"/></svg>",
        ))
        .unwrap_err();
        assert_eq!(errors.len(), 3, "{errors:?}");
        assert!(
            errors[0].starts_with("`content` of `<meta>` carries `javascript:alert(1)`"),
            "{errors:?}"
        );
    }

    #[test]
    fn affiliate_links_are_found_however_the_query_is_written() {
        for href in [
            "https://www.amazon.com/dp/B0BG9?th=1&amp;tag=mysite-20",
            "https://www.amazon.com/dp/B0BG9?th=1&tag=mysite-20",
            "https://WWW.AMAZON.COM./dp/B0BG9?%74ag=mysite-20",
            "https:\\\\amazon.com\\dp?tag=x",
        ] {
            let (out, stats) = run(&format!("<a href=\"{href}\">x</a>")).unwrap();
            assert_eq!(stats.affiliate_links, 1, "{href}");
            assert!(out.contains("rel=\"sponsored noopener\""), "{out}");
            assert!(out.contains("Amazon sentence."), "{out}");
        }
    }
}
