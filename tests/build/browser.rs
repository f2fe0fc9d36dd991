use crate::support::*;

#[test]
fn copy_buttons_copy_console_commands_without_prompts() {
    let Some(browser) = Browser::start("copy_buttons_copy_console_commands_without_prompts") else {
        return;
    };
    let site = Fixture::new("basic");
    site.build().unwrap();
    let server = StaticServer::start(site.root().join("public"), "/");
    browser.call(
        "POST",
        "/url",
        serde_json::json!({"url": format!("{}/guides/first-error/", server.origin())}),
    );
    // Every code block gets a button; click the console block's.
    let counts = browser.wait_for(
        "var b = document.querySelectorAll('.codeblock'), c = document.querySelectorAll('.codeblock > button.copy'); return c.length ? [b.length, c.length] : null;",
    );
    assert_eq!(counts[0], counts[1]);
    browser.click(".codeblock[data-lang=console] > button.copy");
    let copied = browser.wait_for("return document.querySelector('.codeblock[data-lang=console]').getAttribute('data-copied-text')");
    assert_eq!(copied, "ollama run llama3\n");
}
