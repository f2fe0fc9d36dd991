//! errata's search index against Pagefind's own: the same pages through
//! errata's indexer (`errata::search::SearchIndex`, fed from several
//! threads, out of order) and through the `pagefind` crate's indexer
//! (`PagefindIndex::add_html_file`, one page at a time, in order) must
//! give the same bundle: every file by the same name, and the same bytes
//! once ungzipped (errata compresses at another level). Pagefind's search
//! script reads the bundle, so any difference is a search that finds
//! something else, or nothing.

use super::support::*;
use errata::search::SearchIndex;
use pagefind::api::PagefindIndex;
use pagefind::options::PagefindServiceConfig;

/// A bundle's files by name (relative to the bundle's folder), index files
/// ungzipped.
type Files = BTreeMap<String, Vec<u8>>;

fn ungzip(name: &str, bytes: Vec<u8>) -> Vec<u8> {
    if !name.contains(".pf_") {
        return bytes;
    }
    let mut out = Vec::new();
    flate2::read::GzDecoder::new(&bytes[..])
        .read_to_end(&mut out)
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    out
}

/// Pagefind's bundle of `pages` (site path, HTML), added in order.
fn pagefind_bundle(language: &str, pages: &[(String, String)]) -> Files {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let options = PagefindServiceConfig::builder()
        .force_language(language.to_string())
        .build();
    let mut index = PagefindIndex::new(Some(options)).unwrap();
    runtime.block_on(async {
        for (path, html) in pages {
            index
                .add_html_file(None, Some(format!("/{path}")), html.clone())
                .await
                .unwrap();
        }
        index
            .get_files()
            .await
            .unwrap()
            .into_iter()
            .map(|f| {
                let name = f.filename.to_string_lossy().replace('\\', "/");
                let bytes = ungzip(&name, f.contents);
                (name, bytes)
            })
            .collect()
    })
}

/// errata's bundle of the same pages, added from four threads, last first:
/// the fragments written as pages are added, then the rest (which may
/// write some fragments again, under the same name or another).
fn errata_bundle(language: &str, pages: &[(String, String)]) -> Files {
    let index = SearchIndex::start(language, pages.iter().map(|(p, _)| p.as_str()));
    let early = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for part in pages.rchunks(pages.len().div_ceil(4).max(1)) {
            let (index, early) = (&index, &early);
            scope.spawn(move || {
                for (path, html) in part.iter().rev() {
                    let file = index.add(&format!("{path}index.html"), html.as_bytes());
                    early.lock().unwrap().extend(file);
                }
            });
        }
    });
    let early = early.into_inner().unwrap();
    // Only a page with a body is written early (one without may be left
    // out at the end).
    if pages
        .iter()
        .any(|(_, html)| html.contains("data-pagefind-body"))
    {
        assert!(!early.is_empty(), "no fragment was written early");
    }
    // What the build wrote: the index reads back from it any fragment it
    // must write again under another name.
    let written: Files = early.iter().cloned().collect();
    let rest = index.finish(|path| written.get(path).cloned()).unwrap();
    early
        .into_iter()
        .chain(rest)
        .map(|(name, bytes)| {
            let name = name.strip_prefix("pagefind/").unwrap().to_string();
            let bytes = ungzip(&name, bytes);
            (name, bytes)
        })
        .collect()
}

/// Asserts that errata's bundle of `pages` is Pagefind's, word index
/// included, and returns it.
fn assert_same_bundle(language: &str, pages: &[(String, String)]) -> Files {
    let ours = assert_same_files(language, pages);
    assert!(
        ours.keys().any(|n| n.ends_with(".pf_index")),
        "no word index: {:?}",
        ours.keys().collect::<Vec<_>>()
    );
    ours
}

/// Asserts that errata's bundle of `pages` has Pagefind's files, with the
/// same bytes, and returns it.
fn assert_same_files(language: &str, pages: &[(String, String)]) -> Files {
    let theirs = pagefind_bundle(language, pages);
    let ours = errata_bundle(language, pages);
    let names = |files: &Files| files.keys().cloned().collect::<Vec<_>>();
    assert_eq!(names(&ours), names(&theirs), "the bundles' files");
    for (name, bytes) in &theirs {
        let mine = &ours[name];
        if mine != bytes {
            let show = |b: &[u8]| {
                if name.contains("fragment") || name.ends_with(".json") {
                    String::from_utf8_lossy(b).into_owned()
                } else {
                    format!("{} bytes: {b:?}", b.len())
                }
            };
            panic!(
                "{name} differs\n errata:   {}\n pagefind: {}",
                show(mine),
                show(bytes)
            );
        }
    }
    ours
}

/// A page in errata's shape: `body` inside a `data-pagefind-body`, with
/// navigation and a footer around it.
fn page(title: &str, body: &str) -> String {
    format!(
        "<!doctype html><html lang=en><head><meta charset=utf-8><title>{title} | Site</title>\
         <style>.x{{color:red}}</style><script>var words = 'script words';</script></head>\
         <body><nav><a href=/>Navigation words</a></nav><main>\
         <article class=triage data-pagefind-body><h1>{title}</h1>{body}</article>\
         </main><footer>Footer words</footer></body></html>"
    )
}

#[test]
fn the_default_site_indexes_as_pagefind_indexes_it() {
    let site = DefaultSite::get();
    let mut pages = Vec::new();
    for entry in walkdir::WalkDir::new(&site.public).sort_by_file_name() {
        let entry = entry.unwrap();
        let rel = entry.path().strip_prefix(&site.public).unwrap();
        let rel = rel.to_string_lossy().replace('\\', "/");
        if rel.starts_with("pagefind/") {
            continue;
        }
        if let Some(dir) = rel.strip_suffix("index.html") {
            let html = std::fs::read_to_string(entry.path()).unwrap();
            pages.push((dir.to_string(), html));
        }
    }
    assert!(pages.len() > 15, "{} pages", pages.len());
    assert_same_bundle("en", &pages);
}

#[test]
fn pagefind_attributes_weights_anchors_and_odd_words_index_as_pagefind_indexes_them() {
    let pages: Vec<(String, String)> = [
        (
            "Weights and anchors",
            "<h2 id=first-section>First <em>section</em> title</h2>\
             <p data-pagefind-weight=3>Weighted <b>heavily</b> words.</p>\
             <div data-pagefind-weight=0.5><h3 id=inner>Inner heading</h3><p>Light</p></div>\
             <p data-pagefind-weight=0>Zero weight</p><p data-pagefind-weight=lots>Bad weight</p>\
             <h4>Four</h4><h5>Five</h5><h6>Six</h6>\
             <p id=para data-pagefind-title='A &amp; B'>Anchored <a href=#x id=link>linked <code>code</code></a> text</p>",
        ),
        (
            "Ignored parts",
            "<p>Kept words</p><section data-pagefind-ignore><p>Ignored words</p><h2 id=ig>Heading</h2></section>\
             <div data-pagefind-ignore=all><p data-pagefind-filter=hidden>All gone</p></div>\
             <div data-pagefind-ignore=index><span data-pagefind-meta=kept>Meta still read</span></div>\
             <form><label>Label</label><input name=q></form><svg><text>vector</text></svg>\
             <template><p>template words</p></template><noscript>no script</noscript>\
             <textarea>area words &lt;x&gt;</textarea>",
        ),
        (
            "Filters, meta and sorts",
            "<p data-pagefind-filter=tool>vLLM</p><p data-pagefind-filter='tool:Ollama, gpu:NVIDIA'>x</p>\
             <img src=/a.png alt='An image' data-pagefind-meta='image[src], alt:fixed'>\
             <span data-pagefind-sort=weight>10</span><span data-pagefind-sort='date:2024-01-02'></span>\
             <p data-pagefind-default-meta='title:Default title, author:Someone'>x</p>\
             <p data-pagefind-meta=summary>The <em>summary</em> of the page filters</p>\
             <p data-pagefind-index-attrs=title,data-x title='Attribute text' data-x='more words'>Body</p>",
        ),
        (
            "Odd words",
            "<p>CUDA_VISIBLE_DEVICES=0 torch.cuda.OutOfMemoryError camelCaseWord HTTP2Server \
             don't re-run 3.14 1,024 MiB v0.6.1 ./llama-server --n-gpu-layers=99 \
             café naïve Über façade Crème brûlée résumé CAFÉ resumé rèsume</p>\
             <p>emoji 🚀 launch ✅ ok 🤖robot</p><p>カタカナテキスト ひらがな</p>\
             <p>entities &amp; &lt;tags&gt; &quot;quoted&quot; &#x41;&#66; &nbsp;nbsp&nbsp;here</p>\
             <p>line<br>break and ___PAGEFIND_ not_a_marker _underscored</p>\
             <p>zero\u{200B}width \u{200B} trailing\u{200B} \u{200B}\u{200B}leading</p>\
             <ul><li>one</li><li>two?</li><li>three)</li></ul><table><tr><td>cell</td><td>cell two</td></tr></table>",
        ),
        (
            "Sort by number",
            "<span data-pagefind-sort=weight>2.5</span><p>café words again, and naïve</p>\
             <p data-pagefind-filter=tool>vLLM</p>",
        ),
    ]
    .iter()
    .enumerate()
    .map(|(i, (title, body))| (format!("p{i}/"), page(title, body)))
    .chain([
        // No body: left out, since the other pages have one.
        (
            "nobody/".into(),
            "<html><body><p>Nothing marked</p></body></html>".into(),
        ),
        // A body with no words: left out.
        (
            "empty/".into(),
            "<html><body><div data-pagefind-body> </div></body></html>".into(),
        ),
        // A body inside an inline element, with text around it; inline
        // elements with and without ids, inside and outside anchors.
        (
            "inline/".into(),
            "<html lang=en><body><p>before <span>span <em>em</em> text <span data-pagefind-body>\
             <b>bold</b> body <a id=inl href=#>link <code>code</code></a></span> after <i id=it>it</i></span>\
             tail</p><p id=outer>outer <span>in <strong>strong</strong></span> <span id=sid>with id</span></p>\
             <div data-pagefind-ignore><span>ignored span</span></div></body></html>"
                .into(),
        ),
        // Elements closed by an ancestor's end tag (raw HTML that the
        // sanitiser never lets through, but a theme can write): inline in
        // a paragraph and in headings, a block inside a heading, one with
        // an id (an anchor), nested two deep, and in the page's title.
        (
            "unclosed/".into(),
            "<html lang=en><body><article data-pagefind-body>\
             <h1>Unclosed <b>title</h1><p>para <b>bold run</p><p>next para</p>\
             <h2>heading <em>emphasis</h2><p>after heading</p>\
             <h3 id=three>third <span id=inner>inner span</h3>\
             <div>outer <p>inner para <i>deep <b>deeper</div><p>tail words</p>\
             <h4><div>block in heading</h4><p>end</p>\
             <span>span <p>para in span</span> after span</p>\
             <p>para <h2>heading in para</p> after</h2>\
             <ul><li>one<li>two<li>three</ul><dl><dt>term<dd>definition</dl>\
             <h5><h6>six in five</h5>five tail</h6>\
             <table><tr><td>cell<td>cell two<tr><td>row two</table>\
             <p>x<span/>y<br/>z<div/>w</p><em>a<svg/>b</em>\
             <h2 data-pagefind-weight=2>weighted <b>inside</h2><section><h3>sec <span>tion</section>\
             <p id=q>anchor <em>em run</p><p>x <math><mi/>mi<mo>+</mo></math> y</p>\
             <p>svg <svg><path/><text>in svg</text></svg> after</p>\
             </article></body></html>"
                .into(),
        ),
        // `<svg/>` right in the body: Pagefind ignores the body.
        (
            "svgbody/".into(),
            "<html lang=en><body><p>outside</p><main data-pagefind-body><p>before</p><svg/>\
             <p>after</p></main></body></html>"
                .into(),
        ),
        // The tokenizer's corners: empty and oddly closed comments, CDATA
        // and other bogus comments in HTML, and scripts whose `<!--
        // <script>` hides their end tag.
        (
            "corners/".into(),
            "<html lang=en><body><main data-pagefind-body><p>one <!--> two</p>\
             <p>three <!-- x --!> four</p><p>five <![CDATA[cdata words]]> six</p>\
             <script><!--<script>var a = '</script>' --></script><p>seven</p>\
             <svg><title>svg title</title><style>x{}</style></svg><p>eight <? pi ?> nine</p>\
             <p>ten <!doctype x> eleven <!---> twelve</p>\
             <script><!--<script></script>still script--></script><p>thirteen</p>\
             <script>a <!-- b </script><p>fourteen</p><script><!--><SCRIPT></script><p>fifteen</p>\
             <script><!--<Script>x</sCRIPT/>y--!></script>z--></script><p>sixteen</p>\
             <p>cdata <![CDATA[x>y]]> in html</p><math><mi>m</mi></math></main></body></html>"
                .into(),
        ),
        // A body inside an element with no attributes, which an ancestor's
        // end tag then closes.
        (
            "bodyin/".into(),
            "<html lang=en><body><p>aa <span>x <b data-pagefind-body>body words</b> z</p>\
             <h2>h <em>e <i id=b2 data-pagefind-body>second</h2> tail\
             <p>ää <span>ö <em>é <b data-pagefind-body>bödy</b> ü</span> ë</p>\
             <div>d <span data-pagefind-ignore>ig <b data-pagefind-body>in ignored</div>\
             <p>left <span>open <b data-pagefind-body>at the end</b> ok</body></html>"
                .into(),
        ),
        // What is left inside elements whose text is dropped (read the
        // quick way, see `src/search/skip.rs`): anchors with and without
        // titles (an anchor id taken inside must not give its title to the
        // same id in the body), a title with no other, ids inside removed
        // elements, SVG, raw text and an element closed by an end tag from
        // outside; and what sends the parser the usual way (an `h1`, an
        // `img`, meta).
        (
            "dropped/".into(),
            "<html lang=en><head><meta charset=utf-8></head><body>\
             <nav id=top><title>Nav &amp; title</title><a id=' home ' href=/>Home</a>\
             <ul><li id=dup data-pagefind-title='Stale title'>x</li><li><INPUT id=q></ul></nav>\
             <main><article data-pagefind-body><h2 id=dup>Body heading</h2><p>body words</p>\
             <section data-pagefind-ignore><h2 id=ig data-pagefind-title=Ignored>ig</h2>\
             <div data-pagefind-ignore=all id=deep><p id=deeper>deep</p></div>\
             <svg><g id=g/><path/></svg><script>if (a < b) {}</script><br/><span/><p>x</section>\
             <h3 id=after data-pagefind-title='After title'>After ignored</h3>\
             <div data-pagefind-ignore><p id=open>closed from outside</article>\
             <footer><p id=foot>footer</p></footer>\
             <form><img src=/f.png alt=form><label id=lab>label</label></form>\
             <aside data-pagefind-ignore><span data-pagefind-meta=aside>Aside meta</span></aside>\
             <p>outside</p><section data-pagefind-body><h2 id=dup>Second</h2>\
             <p id=last data-pagefind-title=Last>last words</p></section></main></body></html>"
                .into(),
        ),
        // Found by review: text in a dropped element still counts for an
        // anchor outside it when it is in an inline element inside (the
        // children of an ignored element are indexed, and a removed one in
        // an excluded element is only ignored), as in a heading's
        // permalink; and `plaintext` makes the rest of the page its text.
        (
            "anchored/".into(),
            page(
                "Anchored",
                "<p id=x>a <span data-pagefind-ignore>b <em>c</em></span> d</p>\
                 <nav id=top><a href=/>Home</a></nav><p id=y>Search <label>Query <i>box</i></label></p>\
                 <p id=z>a <span data-pagefind-ignore=all><label><i>c</i></label></span></p>\
                 <h2 id=s>Section <a href=#s data-pagefind-ignore><span>#</span></a></h2>",
            ),
        ),
        (
            "plaintext/".into(),
            page(
                "Plain",
                "<p>before</p><plaintext data-pagefind-ignore><b>x</b></plaintext><p>after words</p>",
            ),
        ),
        // An `h1` in a dropped element titles the page.
        (
            "dropped-h1/".into(),
            "<html lang=en><head><title>Head title</title></head><body>\
             <footer><p id=foot>footer</p><h1>Footer title</h1></footer>\
             <main data-pagefind-body><p>words</p></main></body></html>"
                .into(),
        ),
        // Two bodies, and an element left open.
        (
            "two/".into(),
            "<html lang=en><body><div data-pagefind-body><p>First body</p></div><p>between</p>\
             <section data-pagefind-body><h2>Second body</h2><p>words</p></section><div><p>open"
                .into(),
        ),
    ])
    .collect();
    assert_same_bundle("en", &pages);
}

/// Pages with no body and no title in their head: a `<title>` inside an
/// element that `data-pagefind-ignore=all` excludes gives no title, one
/// inside an element that is only ignored does (found by review).
#[test]
fn titles_inside_dropped_elements_title_the_page_as_pagefind_says() {
    let pages: Vec<(String, String)> = [
        "<div data-pagefind-ignore=all><title>Excluded title</title></div><p>words</p>",
        "<nav><title data-pagefind-ignore=all>T two</title></nav><p>words</p>",
        "<div data-pagefind-ignore=all><nav><title>Via nav</title></nav></div><p>words</p>",
        "<nav><title data-pagefind-ignore>T four</title></nav><p>words</p>",
    ]
    .iter()
    .enumerate()
    .map(|(i, body)| {
        (
            format!("t{i}/"),
            format!("<html><body>{body}</body></html>"),
        )
    })
    .collect();
    for page in pages.chunks(1) {
        assert_same_bundle("en", page);
    }
}

#[test]
fn a_language_pagefind_cannot_stem_indexes_as_pagefind_indexes_it() {
    let pages = vec![
        (
            "a/".to_string(),
            page("Erreur", "<p>mémoire insuffisante lors de l'allocation</p>"),
        ),
        ("b/".to_string(), page("Fehler", "<p>Speicher voll</p>")),
    ];
    assert_same_bundle("fr", &pages);
    assert_same_bundle("xx", &pages);
}

/// A site large enough that errata encodes its word index in several runs
/// of pages at once (each word's list then joins across runs), with words
/// whose pages are far apart (a page number from the one before in two or
/// three bytes, across runs), words in one run only, forms with
/// diacritics, and page titles in the meta: the word index must still be
/// Pagefind's, byte for byte, over more than one chunk.
#[test]
fn a_site_of_many_pages_indexes_as_pagefind_indexes_it() {
    let pages: Vec<(String, String)> = (0..1200)
        .map(|i: usize| {
            let mut body = String::from("<p>common words on every page");
            for k in 0..60 {
                if i.is_multiple_of(k + 2) {
                    body.push_str(&format!(" period{k}"));
                }
            }
            if i % 397 == 5 {
                body.push_str(" rare far apart");
            }
            if i == 3 || i == 1199 {
                body.push_str(" ends");
            }
            if i < 250 {
                body.push_str(" early");
            }
            if i.is_multiple_of(7) {
                body.push_str(" café résumé");
            } else if i.is_multiple_of(5) {
                body.push_str(" cafe resume");
            }
            body.push_str(&format!(" page{i}</p>"));
            let title = format!("Error {} number {i}", i % 13);
            (format!("p{i}/"), page(&title, &body))
        })
        .collect();
    let bundle = assert_same_bundle("en", &pages);
    let chunks = bundle.keys().filter(|n| n.ends_with(".pf_index")).count();
    assert!(chunks > 1, "{chunks} word index chunk(s)");
}

/// Pages with nothing to index: Pagefind writes its program files and an
/// entry naming no language, and no stemming WebAssembly for the
/// language, which errata wrote.
#[test]
fn a_site_with_nothing_to_index_bundles_as_pagefind_bundles_it() {
    let sites = [
        vec![(
            "a/".to_string(),
            "<html><body><p></p></body></html>".to_string(),
        )],
        vec![("a/".to_string(), "words, but no html element".to_string())],
        vec![
            (
                "a/".to_string(),
                "<html lang=en><body><nav>menu</nav></body></html>".to_string(),
            ),
            (
                "b/".to_string(),
                "<p data-pagefind-ignore>ignored</p>".to_string(),
            ),
        ],
    ];
    for pages in &sites {
        let files = assert_same_files("en", pages);
        assert!(
            !files
                .keys()
                .any(|n| n.ends_with(".pf_index") || n == "wasm.en.pagefind"),
            "{pages:?}: {:?}",
            files.keys().collect::<Vec<_>>()
        );
        assert!(
            files.contains_key("pagefind.js"),
            "{:?}",
            files.keys().collect::<Vec<_>>()
        );
    }
}
