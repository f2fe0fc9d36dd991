//! HTML minification. The only module that knows minify-html.

use std::sync::LazyLock;

use minify_html::Cfg;

static CFG: LazyLock<Cfg> = LazyLock::new(|| Cfg {
    // Closing tags stay: other tools (and people) read our output.
    keep_closing_tags: true,
    keep_html_and_head_opening_tags: true,
    // Scripts are left exactly as written in the theme.
    minify_js: false,
    minify_css: true,
    ..Cfg::new()
});

/// Minifies one HTML document. Deterministic: the same input gives the same bytes.
pub fn minify(html: &str) -> Vec<u8> {
    minify_html::minify(html.as_bytes(), &CFG)
}

#[cfg(test)]
mod tests {
    #[test]
    fn keeps_closing_tags_and_scripts() {
        let out = super::minify("<p>a   b</p>\n<script>\n  let  x = 1;\n</script>");
        let out = String::from_utf8(out).unwrap();
        assert!(out.contains("<p>a b</p>"), "{out}");
        assert!(out.contains("let  x = 1;"), "{out}");
    }
}
