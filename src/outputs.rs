//! Site-wide generated files: `sitemap.xml`, `robots.txt`, `atom.xml` and
//! `_headers` (Netlify and Cloudflare Pages). Each is written once per build
//! in time linear in the number of pages.

use std::fmt::Write as _;

use crate::assemble::SiteIndex;
use crate::config::Config;
use crate::escape::xml as escape_xml;

/// A `YYYY-MM-DD` or RFC 3339 date as an RFC 3339 date-time.
fn date_time(date: &str) -> String {
    if date.len() == 10 {
        format!("{date}T00:00:00Z")
    } else {
        date.replace(' ', "T")
    }
}

/// Every HTML page of the site that search engines should index, as a site
/// path, with its last modification date.
pub fn indexable_paths(site: &SiteIndex) -> Vec<(String, Option<String>)> {
    let mut paths: Vec<(String, Option<String>)> = Vec::new();
    for section in &site.sections {
        paths.push((section.path.clone(), None));
    }
    for page in &site.pages {
        let front = &page.parsed.front;
        let lastmod = front
            .updated
            .as_ref()
            .or(front.date.as_ref())
            .map(|d| d.0.clone());
        paths.push((page.path.clone(), lastmod));
    }
    for taxonomy in &site.taxonomies {
        paths.push((format!("{}/", taxonomy.name), None));
        for term in &taxonomy.terms {
            paths.push((format!("{}/{}/", taxonomy.name, term.slug), None));
        }
    }
    paths.sort();
    paths
}

/// `sitemap.xml`: every indexable page, with `lastmod` where known.
pub fn sitemap(config: &Config, site: &SiteIndex) -> String {
    let mut xml = String::from(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n",
    );
    for (path, lastmod) in indexable_paths(site) {
        let _ = write!(
            xml,
            "  <url>\n    <loc>{}</loc>\n",
            escape_xml(&config.absolute(&path))
        );
        if let Some(lastmod) = lastmod {
            let _ = writeln!(xml, "    <lastmod>{}</lastmod>", escape_xml(&lastmod));
        }
        xml.push_str("  </url>\n");
    }
    xml.push_str("</urlset>\n");
    xml
}

/// `robots.txt`: everything allowed, and where the sitemap is.
pub fn robots(config: &Config) -> String {
    format!(
        "User-agent: *\nAllow: /\n\nSitemap: {}\n",
        config.absolute("sitemap.xml")
    )
}

/// `atom.xml`: the newest `feed_limit` dated pages.
pub fn atom(config: &Config, site: &SiteIndex) -> String {
    let dated: Vec<usize> = site
        .recent
        .iter()
        .copied()
        .filter(|&i| site.pages[i].parsed.front.date.is_some())
        .take(config.feed_limit)
        .collect();
    let updated = dated
        .iter()
        .filter_map(|&i| {
            let front = &site.pages[i].parsed.front;
            front
                .updated
                .as_ref()
                .or(front.date.as_ref())
                .map(|d| date_time(&d.0))
        })
        .max()
        .unwrap_or_else(|| "1970-01-01T00:00:00Z".into());
    let author = config.author.as_deref().unwrap_or(&config.title);
    let mut xml = String::from("<?xml version=\"1.0\" encoding=\"utf-8\"?>\n");
    let _ = writeln!(
        xml,
        "<feed xmlns=\"http://www.w3.org/2005/Atom\" xml:lang=\"{}\">",
        escape_xml(&config.language)
    );
    let _ = writeln!(xml, "  <title>{}</title>", escape_xml(&config.title));
    if !config.description.is_empty() {
        let _ = writeln!(
            xml,
            "  <subtitle>{}</subtitle>",
            escape_xml(&config.description)
        );
    }
    let _ = writeln!(
        xml,
        "  <link href=\"{}\" rel=\"self\" type=\"application/atom+xml\"/>\n  <link href=\"{}\"/>",
        escape_xml(&config.absolute("atom.xml")),
        escape_xml(config.base_url.as_str())
    );
    let _ = writeln!(
        xml,
        "  <id>{}</id>\n  <updated>{updated}</updated>",
        escape_xml(config.base_url.as_str())
    );
    let _ = writeln!(
        xml,
        "  <author><name>{}</name></author>",
        escape_xml(author)
    );
    for i in dated {
        let page = &site.pages[i];
        let front = &page.parsed.front;
        let url = escape_xml(&config.absolute(&page.path));
        let published = front
            .date
            .as_ref()
            .map(|d| date_time(&d.0))
            .unwrap_or_default();
        let updated = front
            .updated
            .as_ref()
            .map_or_else(|| published.clone(), |d| date_time(&d.0));
        let _ = writeln!(
            xml,
            "  <entry>\n    <title>{}</title>",
            escape_xml(&front.title)
        );
        let _ = writeln!(xml, "    <link href=\"{url}\"/>\n    <id>{url}</id>");
        let _ = writeln!(
            xml,
            "    <published>{published}</published>\n    <updated>{updated}</updated>"
        );
        let summary = front
            .description
            .as_deref()
            .or(front.triage.as_deref())
            .unwrap_or(&front.signature);
        let _ = writeln!(
            xml,
            "    <summary>{}</summary>\n  </entry>",
            escape_xml(summary)
        );
    }
    xml.push_str("</feed>\n");
    xml
}

/// `_headers` for Netlify and Cloudflare Pages: the wasm content type,
/// immutable caching for fingerprinted assets (by exact path, so no rule
/// overlaps another), and short caching for HTML.
pub fn headers(config: &Config, fingerprinted: &[String]) -> String {
    let base = config.base_path();
    let mut out =
        String::from("# Generated by errata. Netlify and Cloudflare Pages read this file.\n");
    for pattern in [
        base.to_string(),
        format!("{base}*/"),
        format!("{base}*.html"),
    ] {
        let _ = writeln!(
            out,
            "{pattern}\n  Cache-Control: public, max-age=0, must-revalidate\n"
        );
    }
    let _ = writeln!(out, "{base}*.wasm\n  Content-Type: application/wasm\n");
    for path in fingerprinted {
        let _ = writeln!(
            out,
            "{base}{path}\n  Cache-Control: public, max-age=31536000, immutable\n"
        );
    }
    out
}

/// The generated files besides the pages (sitemap, robots.txt, the feed,
/// the match index and `_headers`), by output path. A file of the same name
/// in the site's `static/` wins, so those are left out.
pub fn generated(
    config: &Config,
    site: &SiteIndex,
    assets: &crate::assets::Assets,
) -> Vec<(&'static str, String)> {
    let all = [
        ("sitemap.xml", sitemap(config, site)),
        ("robots.txt", robots(config)),
        ("atom.xml", atom(config, site)),
        (
            crate::match_index::FILE,
            crate::match_index::site_json(config, site),
        ),
        ("_headers", headers(config, &assets.fingerprinted())),
    ];
    all.into_iter()
        .filter(|(name, _)| !assets.files.contains_key(*name))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_from_front_matter_is_well_formed_xml() {
        let nasty = "a & b <c> \"d\" 'e' \u{1}\u{8}\u{b}\u{fffe} tab\tline\n</title>]]>";
        let xml = format!(
            "<feed><title>{}</title><link href=\"{}\"/></feed>",
            escape_xml(nasty),
            escape_xml(nasty)
        );
        let doc = roxmltree::Document::parse(&xml).expect("well-formed");
        let title = doc.descendants().find(|n| n.has_tag_name("title")).unwrap();
        assert_eq!(
            title.text(),
            Some("a & b <c> \"d\" 'e' \u{fffd}\u{fffd}\u{fffd}\u{fffd} tab\tline\n</title>]]>")
        );
        let link = doc.descendants().find(|n| n.has_tag_name("link")).unwrap();
        assert!(
            link.attribute("href")
                .unwrap()
                .starts_with("a & b <c> \"d\"")
        );
    }

    #[test]
    fn dates_become_date_times() {
        assert_eq!(date_time("2026-11-29"), "2026-11-29T00:00:00Z");
        assert_eq!(date_time("2026-11-29T10:00:00Z"), "2026-11-29T10:00:00Z");
    }
}
