//! The "Paste your error or search" box of a page open in [`Browser`]:
//! its text area, and the results it lists.

use super::*;

/// Waits until the box is shown (its script hides nothing when it runs)
/// and returns the WebDriver id of its text area.
pub fn the_box(browser: &Browser) -> String {
    browser.wait_for("return !document.querySelector('[data-find]').hidden");
    browser.element("[data-find] textarea")
}

/// Waits for the box to finish and returns `[class, href]` of each result.
pub fn results(browser: &Browser) -> Vec<(String, String)> {
    let v = browser.wait_for(
        "var box = document.querySelector('[data-find]');
         if (box.getAttribute('data-state') !== 'done') return null;
         return Array.prototype.map.call(box.querySelectorAll('[data-find-results] > li'),
           function (li) { return [li.className, li.querySelector('a').getAttribute('href')]; });",
    );
    v.as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r[0].as_str().unwrap().to_string(),
                r[1].as_str().unwrap().to_string(),
            )
        })
        .collect()
}
