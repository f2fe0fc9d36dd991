//! Markdown to final HTML: render (with highlighting and link resolution),
//! put in a page, apply the link policy (finish) and minify, as the build
//! does for every page. Nothing may panic, and the problems found must be
//! located inside the text.
#![no_main]

use std::path::Path;
use std::sync::LazyLock;

use libfuzzer_sys::fuzz_target;

use errata::config::Config;
use errata::diagnostics::LineIndex;
use errata::finish::{FinishContext, finish};
use errata::highlight::Highlighter;
use errata::links::LinkPolicy;
use errata::markdown::{RenderContext, ResolvedLink, render};

static CONFIG: LazyLock<Config> = LazyLock::new(|| {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    Config::load(&root).expect("the repository's site.toml is valid")
});
static HIGHLIGHTER: LazyLock<Highlighter> = LazyLock::new(Highlighter::default);

fuzz_target!(|body: &str| {
    let lines = LineIndex::new(body);
    let resolve = |link: &str| match link.strip_prefix("@/") {
        Some("a.md") => Ok(Some(ResolvedLink {
            url: "/a/".into(),
            page: "a/".into(),
            fragment: None,
        })),
        Some(_) => Err(format!("link to missing page `{link}`")),
        None => Ok(None),
    };
    let ctx = RenderContext {
        path: Path::new("content/fuzz.md"),
        lines: &lines,
        body_offset: 0,
        highlighter: &HIGHLIGHTER,
        resolve: &resolve,
        image_size: &|_: &str| Some((640, 480)),
        sanitise: true,
    };
    let md = render(body, &ctx);
    let count = body.lines().count() + 1;
    for d in &md.diagnostics {
        assert!(d.line >= 1 && d.line <= count, "{d} is outside the body");
    }
    let page = format!(
        "<!doctype html><html lang=en><head><title>t</title></head><body><main>{}</main></body></html>",
        md.html
    );
    let policy = LinkPolicy::new(&CONFIG);
    let finish_ctx = FinishContext {
        policy: &policy,
        disclosure: &CONFIG.disclosure,
        jsonld: None,
    };
    if let Ok((html, _)) = finish(&page, &finish_ctx) {
        let _ = errata::minify::minify(&html);
    }
});
