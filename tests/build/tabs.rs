//! Tool tabs: the subsections of a `{.tabs}` heading, as WAI-ARIA tabs
//! whose choice follows the reader from group to group and page to page.

use crate::support::*;

#[test]
fn without_javascript_every_block_shows_under_its_heading() {
    let site = Fixture::new("authoring");
    let report = site.build().unwrap();
    assert!(report.warnings.is_empty(), "{:?}", report.warnings);
    let html = site.read("guides/tabs-a/index.html");
    let s = |a: &str, b: &str, c: &str| (a.to_string(), b.to_string(), c.to_string());
    assert_eq!(
        tab_groups(&html),
        [
            vec![
                s("ollama", "h3:Ollama #", "ollama serve\n"),
                s(
                    "llama-cpp",
                    "h3:llama.cpp #",
                    "llama-server -m model.gguf -ngl 99\n"
                ),
                s("vllm", "h3:vLLM #", "vllm serve model --enforce-eager\n"),
            ],
            vec![
                s("vllm", "h3:vLLM #", "vllm --version\n"),
                s("ollama", "h3:Ollama #", "ollama --version\n"),
            ],
        ]
    );
    // Nothing is hidden until the script runs; the intro stays above the tabs.
    let doc = Html::parse_document(&html);
    assert_eq!(
        select(&doc, ".body [hidden], .body .visually-hidden").len(),
        0
    );
    assert_eq!(select(&doc, "[data-tabs] p").len(), 0);
    assert_eq!(
        select(&doc, "[data-tabs]")[0].value().attr("data-tabs"),
        Some("Fixes")
    );
    // The page loads the tabs script.
    assert!(html.contains("/js/tabs."), "{html}");
}

/// The selected panel's `data-tab` in each group of the page.
const STATE: &str = "return Array.from(document.querySelectorAll('[data-tabs]')).map(function (g) {\
    var t = g.querySelector('[role=tab][aria-selected=true]');\
    return t ? document.getElementById(t.getAttribute('aria-controls')).getAttribute('data-tab') : null; })";

/// An axe-like audit of the roles and ARIA attributes of tabs and callouts
/// (the WAI-ARIA tabs pattern), plus ids, names and alt text; returns the
/// problems found.
const AUDIT: &str = r#"
var problems = [], ids = {};
document.querySelectorAll('[id]').forEach(function (e) { if (ids[e.id]) problems.push('duplicate id ' + e.id); ids[e.id] = 1; });
document.querySelectorAll('[role=tablist]').forEach(function (list) {
  if (!(list.getAttribute('aria-label') || '').trim()) problems.push('tablist without a name');
  var tabs = Array.prototype.slice.call(list.children);
  var selected = tabs.filter(function (t) { return t.getAttribute('aria-selected') === 'true'; });
  if (selected.length !== 1) problems.push('tablist with ' + selected.length + ' selected tabs');
  tabs.forEach(function (t) {
    if (t.getAttribute('role') !== 'tab' || t.tagName !== 'BUTTON') problems.push('tablist child is not a tab button: ' + t.outerHTML);
    if (!t.textContent.trim()) problems.push('tab without a name');
    var panel = document.getElementById(t.getAttribute('aria-controls'));
    if (!panel || panel.getAttribute('role') !== 'tabpanel') { problems.push('tab controls no tabpanel: ' + t.id); return; }
    if (panel.getAttribute('aria-labelledby') !== t.id) problems.push('panel not labelled by its tab: ' + panel.id);
    var on = t.getAttribute('aria-selected') === 'true';
    if (t.tabIndex !== (on ? 0 : -1)) problems.push('roving tabindex wrong on ' + t.id);
    if (panel.hidden === on) problems.push('panel shown or hidden wrongly: ' + panel.id);
    if (panel.tabIndex !== 0) problems.push('panel not focusable: ' + panel.id);
  });
});
document.querySelectorAll('[role=tab]').forEach(function (t) { if (t.parentElement.getAttribute('role') !== 'tablist') problems.push('tab outside a tablist'); });
document.querySelectorAll('[role=tabpanel]').forEach(function (p) { if (!document.querySelector('[aria-controls="' + p.id + '"]')) problems.push('panel without a tab: ' + p.id); });
document.querySelectorAll('[data-callout]').forEach(function (c) { if (c.getAttribute('role') !== 'note' || !c.getAttribute('aria-label')) problems.push('callout without role note and a name'); });
document.querySelectorAll('button').forEach(function (b) { if (!(b.getAttribute('aria-label') || b.textContent).trim()) problems.push('button without a name'); });
document.querySelectorAll('img').forEach(function (i) { if (!i.hasAttribute('alt')) problems.push('img without alt'); });
document.querySelectorAll('[aria-hidden=true] a[href], [aria-hidden=true] button, [aria-hidden=true] [tabindex]').forEach(function () { problems.push('focusable content hidden from assistive technology'); });
return problems;
"#;

fn press(browser: &Browser, key: &str) {
    browser.call(
        "POST",
        "/actions",
        serde_json::json!({"actions": [{"type": "key", "id": "keyboard", "actions": [
            {"type": "keyDown", "value": key}, {"type": "keyUp", "value": key}]}]}),
    );
}

#[test]
fn a_chosen_tool_holds_across_groups_and_pages_and_tabs_work_by_keyboard() {
    let Some(browser) =
        Browser::start("a_chosen_tool_holds_across_groups_and_pages_and_tabs_work_by_keyboard")
    else {
        return;
    };
    let site = Fixture::new("authoring");
    site.build().unwrap();
    let server = StaticServer::start(site.root().join("public"), "/");
    let open = |path: &str, groups: usize| {
        browser.call(
            "POST",
            "/url",
            serde_json::json!({"url": format!("{}/{path}", server.origin())}),
        );
        browser.wait_for(&format!(
            "return document.querySelectorAll('[role=tablist]').length === {groups}"
        ));
    };
    let state = || browser.script(STATE);
    let audit = || browser.script(AUDIT);
    let json = |v: serde_json::Value| v;

    open("guides/tabs-a/", 2);
    browser.script("localStorage.clear(); return null");
    open("guides/tabs-a/", 2);
    assert_eq!(audit(), json(serde_json::json!([])));
    assert_eq!(state(), json(serde_json::json!(["ollama", "vllm"])));
    // Headings give way to the tabs; the panels keep them for screen readers.
    assert_eq!(
        browser.script("return document.querySelectorAll('[data-tabs] h3.visually-hidden').length"),
        json(serde_json::json!(5))
    );

    // A choice in one group switches every group that has the tool.
    browser.click("#tabs-0-2-tab");
    assert_eq!(state(), json(serde_json::json!(["vllm", "vllm"])));
    browser.click("#tabs-1-1-tab");
    assert_eq!(state(), json(serde_json::json!(["ollama", "ollama"])));
    browser.click("#tabs-0-1-tab");
    assert_eq!(state(), json(serde_json::json!(["llama-cpp", "ollama"])));
    assert_eq!(audit(), json(serde_json::json!([])));
    // The block in the chosen tab keeps its Copy button.
    browser.click("#tabs-0-1-panel .codeblock > button.copy");
    let copied = browser.wait_for(
        "return document.querySelector('#tabs-0-1-panel .codeblock').getAttribute('data-copied-text')",
    );
    assert_eq!(copied, "llama-server -m model.gguf -ngl 99\n");

    // Another page (its label spelled `Llama.cpp`) opens on the same tool.
    open("guides/tabs-b/", 1);
    assert_eq!(state(), json(serde_json::json!(["llama-cpp"])));
    assert_eq!(audit(), json(serde_json::json!([])));

    // The keyboard: arrows move and select (wrapping), Home and End jump.
    browser.script("document.querySelector('[role=tab][aria-selected=true]').focus(); return null");
    let focused = || {
        browser.script("var a = document.activeElement; return a.getAttribute('role') === 'tab' && a.getAttribute('aria-selected') === 'true' ? document.getElementById(a.getAttribute('aria-controls')).getAttribute('data-tab') : 'focus lost: ' + a.outerHTML")
    };
    for (key, expect) in [
        ("\u{E014}", "vllm"),      // ArrowRight
        ("\u{E012}", "llama-cpp"), // ArrowLeft
        ("\u{E012}", "ollama"),    // ArrowLeft wraps to the last
        ("\u{E014}", "llama-cpp"), // ArrowRight wraps to the first
        ("\u{E010}", "ollama"),    // End
        ("\u{E011}", "llama-cpp"), // Home
        ("\u{E010}", "ollama"),    // End
    ] {
        press(&browser, key);
        assert_eq!(state(), json(serde_json::json!([expect])));
        assert_eq!(focused(), json(serde_json::json!(expect)));
    }
    assert_eq!(audit(), json(serde_json::json!([])));

    // Back on the first page, both groups show the tool chosen by keyboard.
    open("guides/tabs-a/", 2);
    assert_eq!(state(), json(serde_json::json!(["ollama", "ollama"])));
    // A link to a heading in a hidden panel shows that panel.
    open("guides/tabs-a/#vllm", 2);
    assert_eq!(state(), json(serde_json::json!(["vllm", "ollama"])));
}
