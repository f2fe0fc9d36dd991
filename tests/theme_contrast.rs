//! WCAG AA colour contrast of the default theme, computed from the stylesheets
//! as shipped: every token class of the generated highlight stylesheet against
//! the code background, and the theme's text colours against the backgrounds
//! they sit on, in the light and the dark scheme.

use std::collections::BTreeMap;
use std::path::Path;

const AA: f64 = 4.5;

fn parse_hex(hex: &str) -> (u8, u8, u8) {
    let hex = hex.trim().trim_start_matches('#');
    let full: String = if hex.len() == 3 {
        hex.chars().flat_map(|c| [c, c]).collect()
    } else {
        hex.to_string()
    };
    assert_eq!(full.len(), 6, "not a #rrggbb colour: {hex}");
    let byte = |i: usize| u8::from_str_radix(&full[i..i + 2], 16).unwrap();
    (byte(0), byte(2), byte(4))
}

fn luminance((r, g, b): (u8, u8, u8)) -> f64 {
    let channel = |v: u8| {
        let v = f64::from(v) / 255.0;
        if v <= 0.03928 {
            v / 12.92
        } else {
            ((v + 0.055) / 1.055).powf(2.4)
        }
    };
    0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b)
}

fn ratio(a: &str, b: &str) -> f64 {
    let (la, lb) = (luminance(parse_hex(a)), luminance(parse_hex(b)));
    (la.max(lb) + 0.05) / (la.min(lb) + 0.05)
}

/// `selector -> declarations` for the rules of one CSS block (no nesting).
fn rules(css: &str) -> BTreeMap<String, BTreeMap<String, String>> {
    let mut out = BTreeMap::new();
    let mut text = css.to_string();
    while let Some(start) = text.find("/*") {
        let end = text[start..]
            .find("*/")
            .map_or(text.len(), |e| start + e + 2);
        text.replace_range(start..end, "");
    }
    for rule in text.split('}') {
        let Some((selector, body)) = rule.split_once('{') else {
            continue;
        };
        let decls = body
            .split(';')
            .filter_map(|d| d.split_once(':'))
            .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
            .collect();
        out.insert(selector.trim().to_string(), decls);
    }
    out
}

/// The light part and the `prefers-color-scheme: dark` part of a stylesheet.
fn schemes(css: &str) -> (String, String) {
    let at = css
        .find("@media (prefers-color-scheme: dark)")
        .expect("a dark scheme");
    let dark_body = &css[at..];
    let open = dark_body.find('{').unwrap() + 1;
    // The media block ends at the first "}" that closes it: the one after
    // a rule's "}" with only whitespace between.
    let inner = &dark_body[open..];
    let end = inner.rfind('}').unwrap();
    (css[..at].to_string(), inner[..end].to_string())
}

#[test]
fn every_token_class_meets_aa_in_both_schemes() {
    let css = errata::highlight::stylesheet();
    let (light, dark) = schemes(&css);
    for (name, block) in [("light", light), ("dark", dark)] {
        let rules = rules(&block);
        let code = &rules[".code"];
        let bg = &code["background"];
        let mut checked = 0;
        for (selector, decls) in &rules {
            let Some(color) = decls.get("color") else {
                continue;
            };
            assert!(
                selector == ".code" || selector.starts_with(".code ."),
                "{name}: unexpected rule {selector}"
            );
            let r = ratio(color, bg);
            assert!(
                r >= AA,
                "{name}: `{selector}` {color} on {bg} has contrast {r:.2} < {AA}"
            );
            checked += 1;
        }
        // The comment class (the one Lighthouse flagged) and the other kinds.
        assert!(rules.contains_key(".code .c"), "{name}: no comment rule");
        assert!(checked >= 15, "{name}: only {checked} colour rules");
        assert!(
            !block.contains("opacity"),
            "{name}: opacity lowers contrast"
        );
    }
}

/// The theme's custom properties for the light (`:root`) and dark schemes.
fn theme_vars() -> [(&'static str, BTreeMap<String, String>); 2] {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("themes/default/static/css/style.css");
    let css = std::fs::read_to_string(path).unwrap();
    let vars = |block: &str| -> BTreeMap<String, String> {
        block
            .split([';', '{', '}'])
            .filter_map(|d| d.trim().split_once(':'))
            .filter(|(k, _)| k.trim().starts_with("--"))
            .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
            .collect()
    };
    let at = css.find("@media (prefers-color-scheme: dark)").unwrap();
    let light = vars(&css[..at]);
    let dark_end = at + css[at..].find("}\n}").unwrap();
    let dark = vars(&css[at..dark_end]);
    [("light", light), ("dark", dark)]
}

#[test]
fn theme_text_colours_meet_aa_in_both_schemes() {
    // (text, background) pairs that the stylesheet puts together.
    let pairs = [
        ("--fg", "--bg"),
        ("--fg", "--soft"),
        ("--muted", "--bg"),
        ("--muted", "--soft"),
        ("--accent", "--bg"),
        ("--accent", "--soft"),
    ];
    for (name, vars) in theme_vars() {
        for (fg, bg) in pairs {
            let (Some(f), Some(b)) = (vars.get(fg), vars.get(bg)) else {
                panic!("{name}: {fg} or {bg} is not defined");
            };
            let r = ratio(f, b);
            assert!(r >= AA, "{name}: {fg} {f} on {bg} {b} has contrast {r:.2}");
        }
    }
}

#[test]
fn the_contrast_formula_is_wcag() {
    assert!((ratio("#000000", "#ffffff") - 21.0).abs() < 1e-9);
    assert!((ratio("#777777", "#ffffff") - 4.48).abs() < 0.01);
    assert!((ratio("#fff", "#ffffff") - 1.0).abs() < 1e-9);
}

/// Callouts: in each scheme, each kind's title colour on its background and
/// the body text and links on it meet AA (4.5:1), and its border and icon
/// colour stands out from the page at 3:1 (WCAG 1.4.11, non-text
/// contrast). The stylesheet's rule for each kind must use exactly those
/// variables, so the pairs checked are the pairs shipped.
#[test]
fn callouts_meet_aa_in_both_schemes() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("themes/default/static/css/style.css");
    let css = std::fs::read_to_string(path).unwrap();
    let kinds = ["note", "tip", "important", "warning", "caution"];
    let shipped = rules(&css);
    for kind in kinds {
        let rule = &shipped[&format!("[data-callout={kind}]")];
        assert_eq!(rule["--c"], format!("var(--{kind})"), "{kind}");
        assert_eq!(rule["--c-bg"], format!("var(--{kind}-bg)"), "{kind}");
    }
    let title = &shipped["[data-callout] > .callout-title"];
    assert_eq!(title["color"], "var(--c)");
    for (name, vars) in theme_vars() {
        for kind in kinds {
            let colour = &vars[&format!("--{kind}")];
            let bg = &vars[&format!("--{kind}-bg")];
            for (what, fg, min) in [
                ("title", colour, AA),
                ("body text", &vars["--fg"], AA),
                ("link", &vars["--accent"], AA),
            ] {
                let r = ratio(fg, bg);
                assert!(
                    r >= min,
                    "{name} {kind}: {what} {fg} on {bg} has contrast {r:.2}"
                );
            }
            let r = ratio(colour, &vars["--bg"]);
            assert!(
                r >= 3.0,
                "{name} {kind}: border {colour} on the page has contrast {r:.2}"
            );
        }
    }
}
