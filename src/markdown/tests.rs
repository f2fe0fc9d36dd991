use super::*;

fn render_str(body: &str) -> RenderedMarkdown {
    let lines = LineIndex::new(body);
    let highlighter = Highlighter::default();
    let resolve = |link: &str| match link {
        "@/oom/cuda-out-of-memory.md" => Ok(Some(ResolvedLink {
            url: "/oom/cuda-out-of-memory/".into(),
            page: "oom/cuda-out-of-memory/".into(),
            fragment: None,
        })),
        l if l.starts_with("@/") => Err(format!("link to missing page `{link}`")),
        _ => Ok(None),
    };
    let ctx = RenderContext {
        path: Path::new("x.md"),
        lines: &lines,
        body_offset: 0,
        highlighter: &highlighter,
        resolve: &resolve,
        image_size: &|src: &str| (src == "wide.png").then_some((640, 480)),
        sanitise: true,
    };
    render(body, &ctx)
}

#[test]
fn headings_get_unique_ids_and_self_links() {
    let out = render_str("# Fix it\n\n## Ollama\n\n## Ollama\n\n## Ollama {#custom}\n");
    let ids: Vec<_> = out.toc.iter().map(|h| h.id.as_str()).collect();
    assert_eq!(ids, ["fix-it", "ollama", "ollama-1", "custom"]);
    insta::assert_snapshot!(out.html);
}

#[test]
fn extensions_are_on() {
    let out = render_str(
        "| a | b |\n|---|---|\n| 1 | 2 |\n\n~~old~~\n\n- [x] done\n\nNote[^1].\n\n[^1]: Footnote.\n",
    );
    insta::assert_snapshot!(out.html);
}

#[test]
fn code_blocks_are_highlighted_and_counted() {
    let out = render_str("```bash\nexport OLLAMA_NUM_PARALLEL=1\n```\n\n    indented\n");
    assert_eq!(out.code_blocks, 2);
    insta::assert_snapshot!(out.html);
}

#[test]
fn unknown_language_warns_at_the_fence() {
    let out = render_str("text\n\n```klingon\nQapla'\n```\n");
    assert_eq!(out.diagnostics.len(), 1);
    let d = &out.diagnostics[0];
    assert_eq!((d.line, d.col, d.is_error()), (3, 1, false));
    assert!(out.html.contains("Qapla&#39;") || out.html.contains("Qapla'"));
}

#[test]
fn script_urls_are_errors_at_the_link() {
    let out = render_str("ok\n\nclick [here](javascript:alert(1)) or ![x]( DATA:text/html,hi)\n");
    let at: Vec<_> = out
        .diagnostics
        .iter()
        .map(|d| (d.line, d.col, d.is_error()))
        .collect();
    assert_eq!(at, [(3, 7, true), (3, 38, true)]);
    assert!(!out.html.contains("javascript"));
}

#[test]
fn script_urls_in_raw_html_are_errors_at_the_attribute() {
    let out = render_str(
        "para\n\n<div><a title=x HREF = 'jav&#x09;ascript:x'>a</a></div>\n\ntext <img src=\"data:x\"> and <a href=\"/ok\">ok</a> <a href=\"&#106;avascript:y\">j</a>\n",
    );
    let at: Vec<_> = out
        .diagnostics
        .iter()
        .filter(|d| d.is_error())
        .map(|d| (d.line, d.col, d.message.as_str()))
        .collect();
    assert_eq!(
        at,
        [
            (
                3,
                17,
                "`javascript:` URLs are not allowed in raw HTML (`href` of `<a>`); use http(s), mailto, relative or #fragment URLs"
            ),
            (
                5,
                11,
                "`data:` URLs are not allowed in raw HTML (`src` of `<img>`); use http(s), mailto, relative or #fragment URLs"
            ),
            (
                5,
                53,
                "`javascript:` URLs are not allowed in raw HTML (`href` of `<a>`); use http(s), mailto, relative or #fragment URLs"
            ),
        ]
    );
    assert!(!out.html.contains("javascript"), "{}", out.html);
}

#[test]
fn raw_html_is_sanitised_and_errata_markup_kept() {
    let out = render_str(
        "# Fix it {.lead data-level=1}\n\n<details><summary>More</summary>\n\n```bash\necho \"<b>hi</b>\"\n```\n\n</details>\n\n<script>alert(1)</script>\n\nPress <kbd onclick=\"x()\">Ctrl</kbd>.\n",
    );
    assert!(out.html.contains("<h1 id=\"fix-it\" class=\"lead\" data-level=\"1\">Fix it <a class=\"anchor\" href=\"#fix-it\""), "{}", out.html);
    assert!(
        out.html.contains(
            "<details><summary>More</summary>\n<div class=\"codeblock\" data-lang=\"bash\">"
        ),
        "{}",
        out.html
    );
    assert!(out.html.contains("<kbd>Ctrl</kbd>"), "{}", out.html);
    assert!(
        !out.html.contains("script") && !out.html.contains("onclick"),
        "{}",
        out.html
    );
    let warnings: Vec<_> = out
        .diagnostics
        .iter()
        .map(|d| (d.line, d.col, d.is_error()))
        .collect();
    assert_eq!(warnings, [(11, 1, false), (13, 12, false)]);
}

#[test]
fn a_forged_marker_is_only_text() {
    let out = render_str("<b>x</b> errata-0000000000000000-0. and\n\n```sh\nls\n```\n");
    assert!(
        out.html.contains("errata-0000000000000000-0. and"),
        "{}",
        out.html
    );
    assert_eq!(out.html.matches("codeblock").count(), 1);
}

#[test]
fn only_the_bodys_own_marker_with_a_real_slot_is_put_back() {
    let body = "text";
    let mut trusted = Trusted::new(body, true);
    let Event::Html(slot) = trusted.event("<pre>kept</pre>".into()) else {
        panic!("a trusted piece stands as raw HTML");
    };
    let marker = slot.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    // Another body's marker differs: an author cannot copy one over.
    let Event::Html(other) = Trusted::new("other text", true).event(String::new()) else {
        panic!("a trusted piece stands as raw HTML");
    };
    assert_ne!(slot, other);
    let html = format!("<p>{slot}|{marker}7.|{marker}x.|{other}</p>");
    let (out, lost) = trusted.finish(html);
    assert!(lost.is_empty(), "{lost:?}");
    assert_eq!(
        out,
        format!("<p><pre>kept</pre>|{marker}7.|{marker}x.|{other}</p>"),
        "the real slot is replaced; an out-of-range slot, a bad slot and a foreign marker stay text"
    );
    // Unsanitised pages hold the piece itself, no marker.
    let mut plain = Trusted::new(body, false);
    assert!(matches!(plain.event("<b>x</b>".into()), Event::Html(h) if &*h == "<b>x</b>"));
}

/// Every attribute name in `html`, as a browser parses it.
fn attribute_names(html: &str) -> Vec<String> {
    let doc = scraper::Html::parse_fragment(html);
    doc.tree
        .values()
        .filter_map(|node| node.as_element())
        .flat_map(|e| e.attrs().map(|(name, _)| name.to_string()))
        .collect()
}

#[test]
fn markup_that_raw_html_swallows_is_left_out_and_reported_where_written() {
    // An attribute value (or a tag) left open in an HTML block takes in the
    // Markdown after it. errata's
    // pieces (an image, a code block, a heading, a callout, a check box)
    // must not be put back there: their quotes would end the author's value
    // and what follows would become attributes (`ontoggle`) of the author's
    // element.
    let openers = [
        "<details open title=\"",
        "<details open title='",
        "<p title=\"",
        "<div class=\"x\" title=\"",
        "<table title=x data-y=\"",
        "<section data-x=\"https://e.example/?q=",
    ];
    let pieces = [
        "![ ontoggle=document.title=1337 ](https://e.example/?a=)",
        "```sh\necho \" onclick=alert(1) x=\"\n```",
        "## Fix \" onfocus=alert(1) x=\"",
        "> [!NOTE]\n> \" onmouseover=alert(1)",
        "- [x] \" onclick=alert(1)",
    ];
    for opener in openers {
        for piece in pieces {
            let body = format!("{opener}\n\n{piece}\n\n<b title=\"\">\n\nafter\n");
            let out = render_str(&body);
            let names = attribute_names(&out.html);
            assert!(
                !names.iter().any(|n| n.starts_with("on")),
                "{body:?} gave {names:?}: {}",
                out.html
            );
            // Left out, with an error where the piece was written (line 3).
            let errors: Vec<_> = out
                .diagnostics
                .iter()
                .filter(|d| d.is_error())
                .map(|d| d.line)
                .collect();
            assert!(
                errors.contains(&3),
                "{body:?}: {errors:?} {:?}",
                out.diagnostics
            );
            assert!(!out.html.contains("errata-"), "{}", out.html);
        }
    }
    // The same pieces after raw HTML that is closed are all put back.
    for piece in pieces {
        let out = render_str(&format!(
            "<details open title=\"t\">\n\n{piece}\n\n</details>\n"
        ));
        assert!(
            !out.diagnostics.iter().any(|d| d.is_error()),
            "{piece:?}: {:?}",
            out.diagnostics
        );
        assert!(!out.html.contains("errata-"), "{}", out.html);
    }
}

#[test]
fn heading_attributes_and_fence_info_are_checked_where_written() {
    let out = render_str(
        "# Title {#a\"onclick=\"alert(2)}\n\n## B {onmouseover=x}\n\n```bash\"onclick=alert(1)\nls\n```\n",
    );
    let at: Vec<_> = out
        .diagnostics
        .iter()
        .map(|d| (d.line, d.col, d.is_error()))
        .collect();
    assert_eq!(at, [(1, 9, true), (3, 6, true), (5, 4, true)]);
    assert!(
        !out.html.contains("onclick") && !out.html.contains("onmouseover"),
        "{}",
        out.html
    );
}

#[test]
fn deep_nesting_is_an_error_before_rendering() {
    let body = format!("ok\n\n{} x\n", ">".repeat(5000));
    let out = render_str(&body);
    assert_eq!(out.diagnostics.len(), 1);
    let d = &out.diagnostics[0];
    assert_eq!((d.line, d.col, d.is_error()), (3, 101, true));
    assert!(out.html.is_empty());
}

#[test]
fn internal_links_resolve_or_fail_where_written() {
    let out = render_str("[OOM](@/oom/cuda-out-of-memory.md) and\n[gone](@/nope.md)\n");
    assert!(out.html.contains("href=\"/oom/cuda-out-of-memory/\""));
    assert_eq!(out.diagnostics.len(), 1);
    assert_eq!((out.diagnostics[0].line, out.diagnostics[0].col), (2, 1));
}

#[test]
fn images_get_their_size_and_all_but_the_first_load_lazily() {
    let out = render_str(
        "![The *first* \"one\"](wide.png \"T\")\n\n![second ![inner](wide.png)](other.png)\n\n<p>raw</p>\n\n![third](wide.png)\n",
    );
    let imgs: Vec<&str> = out
        .html
        .match_indices("<img")
        .map(|(i, _)| &out.html[i..i + out.html[i..].find('>').unwrap() + 1])
        .collect();
    assert_eq!(
        imgs,
        [
            "<img src=\"wide.png\" alt=\"The first &quot;one&quot;\" title=\"T\" width=\"640\" height=\"480\" decoding=\"async\" />",
            "<img src=\"other.png\" alt=\"second inner\" loading=\"lazy\" decoding=\"async\" />",
            "<img src=\"wide.png\" alt=\"third\" width=\"640\" height=\"480\" loading=\"lazy\" decoding=\"async\" />",
        ],
        "{}",
        out.html
    );
}

#[test]
fn alerts_are_callouts_that_raw_html_cannot_forge() {
    let body = "> [!NOTE]\n> n\n\n> [!tip]\n> t\n\n> [!IMPORTANT]\n> i\n\n> [!WARNING]\n> **w**\n\n> [!CAUTION]\n> c\n\n\
                <div data-callout=\"warning\" role=\"note\" aria-label=\"Warning\">forged</div>\n\n> plain\n";
    let out = render_str(body);
    for (kind, title) in [
        ("note", "Note"),
        ("tip", "Tip"),
        ("important", "Important"),
        ("warning", "Warning"),
        ("caution", "Caution"),
    ] {
        let open = format!("<div data-callout=\"{kind}\" role=\"note\" aria-label=\"{title}\">");
        assert_eq!(out.html.matches(&open).count(), 1, "{kind}: {}", out.html);
        assert!(out.html.contains(&format!("</svg>{title}</p>")), "{kind}");
    }
    assert!(
        out.html.contains("<p><strong>w</strong></p>\n</div>"),
        "{}",
        out.html
    );
    // The raw HTML keeps its text, not errata's attributes.
    assert!(out.html.contains("<div>forged</div>"), "{}", out.html);
    assert!(
        out.html
            .contains("<blockquote>\n<p>plain</p>\n</blockquote>"),
        "{}",
        out.html
    );
}

#[test]
fn an_unknown_alert_type_is_a_warning_at_its_marker() {
    let out = render_str("Text.\n\n> [!DANGER]\n> Do not.\n\n- item\n\n  >   [!Hint]\n  > x\n");
    let found: Vec<String> = out
        .diagnostics
        .iter()
        .map(|d| format!("{}:{}:{}", d.line, d.col, d.message))
        .collect();
    assert_eq!(
        found,
        [
            "3:3:unknown alert type `[!DANGER]`; rendered as a plain quote",
            "8:7:unknown alert type `[!Hint]`; rendered as a plain quote",
        ]
    );
    assert!(out.diagnostics.iter().all(|d| !d.is_error()));
    assert!(out.html.contains("<blockquote>"), "{}", out.html);
}

#[test]
fn subsections_of_a_tabs_heading_become_tab_panels() {
    let body = "## Fix {.tabs}\n\nIntro.\n\n### Ollama\n\n```bash\nollama serve\n```\n\n### Llama.cpp\n\n> ### quoted\n\n#### Deeper\n\nText.\n\n\
                <div data-tabs=\"forged\" data-tab=\"x\">raw</div>\n\n## Next\n\n### Not a tab\n\n## Again {.tabs}\n\n### vLLM\n";
    let out = render_str(body);
    let html = &out.html;
    let shape: Vec<&str> = html
        .lines()
        .filter_map(|l| {
            [
                "<div class=\"tab",
                "</div>",
                "<h2",
                "<h3",
                "<h4",
                "<p>Intro",
                "<div>raw",
            ]
            .iter()
            .find(|p| l.starts_with(**p))
            .map(|_| l.split('>').next().unwrap())
        })
        .collect();
    assert_eq!(
        shape,
        [
            "<h2 id=\"fix\" class=\"tabs\"",
            "<p",
            "<div class=\"tab-group\" data-tabs=\"Fix\"",
            "<div class=\"tab-panel\" data-tab=\"ollama\" data-label=\"Ollama\"",
            "<h3 id=\"ollama\"",
            "</div",
            "<div class=\"tab-panel\" data-tab=\"llama-cpp\" data-label=\"Llama.cpp\"",
            "<h3 id=\"llama-cpp\"",
            "<h3 id=\"quoted\"",
            "<h4 id=\"deeper\"",
            "<div",
            "</div",
            "</div",
            "<h2 id=\"next\"",
            "<h3 id=\"not-a-tab\"",
            "<h2 id=\"again\" class=\"tabs\"",
            "<div class=\"tab-group\" data-tabs=\"Again\"",
            "<div class=\"tab-panel\" data-tab=\"vllm\" data-label=\"vLLM\"",
            "<h3 id=\"vllm\"",
            "</div",
            "</div",
        ],
        "{html}"
    );
    // The quoted heading stays inside its quote; raw HTML cannot pass for a tab.
    assert!(html.contains("<blockquote>\n<h3 id=\"quoted\""), "{html}");
    assert!(html.contains("<div>raw</div>"), "{html}");
}

#[test]
fn outbound_links_are_those_a_reader_can_follow_where_written() {
    let body = "[a](https://a.example/p) and <https://b.example/>\n\n\
```console\n$ curl -X POST http://127.0.0.1:8000/admin/delete-all?confirm=yes\n```\n\n\
Inline `http://localhost:11434/api` and bare https://bare.example/ text.\n\n\
<p>Raw <a class=x href=\"https://c.example/q?a=1&amp;b=2\">c</a> <img src='https://d.example/i.png'>\n\
<link href=\"https://e.example/style.css\"><!-- <a href=\"https://f.example/\"> --></p>\n\n\
![shot](https://g.example/s.png) [ref][r] [local](/x/) [mail](mailto:a@b.example)\n\n\
[r]: https://h.example/r\n\n    http://indented.example/code\n";
    let out = render_str(body);
    let found: Vec<(usize, usize, &str)> = out
        .outbound
        .iter()
        .map(|(line, col, url)| (*line, *col, url.as_str()))
        .collect();
    assert_eq!(
        found,
        [
            (1, 5, "https://a.example/p"),
            (1, 31, "https://b.example/"),
            (9, 25, "https://c.example/q?a=1&b=2"),
            (9, 74, "https://d.example/i.png"),
            (12, 9, "https://g.example/s.png"),
            // A reference link is located at the link.
            (12, 34, "https://h.example/r"),
        ]
    );
}

#[test]
fn links_to_ipv6_hosts_keep_their_brackets() {
    let out = render_str(
        "[v6](https://[2001:db8::1]:8080/x?a=b) <https://[::1]/y> ![i](//[fe80::1%25eth0]/i.png) [q](https://example.org/?q=%5Bx%5D)",
    );
    // Beside raw HTML, which the sanitiser reads the whole paragraph for.
    let raw = render_str("<b>raw</b> [v6](http://[fe80::1]/z)");
    assert!(
        raw.html.contains(r#"href="http://[fe80::1]/z""#),
        "{}",
        raw.html
    );
    assert!(
        out.html
            .contains(r#"href="https://[2001:db8::1]:8080/x?a=b""#),
        "{}",
        out.html
    );
    assert!(
        out.html.contains(r#"href="https://[::1]/y""#),
        "{}",
        out.html
    );
    assert!(
        out.html.contains(r#"src="//[fe80::1%25eth0]/i.png""#),
        "{}",
        out.html
    );
    // Brackets elsewhere stay encoded.
    assert!(out.html.contains("?q=%5Bx%5D"), "{}", out.html);
    assert_eq!(
        ip_literal_hosts(r#"<p>text //%5B::1%5D</p><a title="//%5B::1%5D">"#.into()),
        r#"<p>text //%5B::1%5D</p><a title="//%5B::1%5D">"#
    );
}
