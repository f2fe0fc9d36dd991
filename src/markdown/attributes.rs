//! What authors may write in heading attributes (`{#id .class key=value}`)
//! and code-fence info strings: only characters that cannot end an HTML
//! attribute or start markup, whatever escaping comes later.

/// Checks a heading id: letters, digits, `-`, `_`, `.` and `:`.
pub(super) fn check_id(id: &str) -> Result<(), String> {
    if !id.is_empty()
        && id
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '.' | ':'))
    {
        Ok(())
    } else {
        Err(format!(
            "heading id `#{id}` may hold only letters, digits, `-`, `_`, `.` and `:`"
        ))
    }
}

/// Checks a heading class: letters, digits, `-` and `_`.
pub(super) fn check_class(class: &str) -> Result<(), String> {
    if !class.is_empty()
        && class
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '-' | '_'))
    {
        Ok(())
    } else {
        Err(format!(
            "heading class `.{class}` may hold only letters, digits, `-` and `_`"
        ))
    }
}

/// `data-` attributes that mean something to errata or its theme (a name
/// starting with one of these): the disclosure, callouts and tabs errata
/// marks, the search index's, and the hooks of the theme's scripts. An
/// author's heading may not carry them, as raw HTML may not (the sanitiser
/// removes every `data-` attribute there): a heading marked
/// `data-disclosure` would stand for the affiliate disclosure, and the
/// real one would not be added.
const RESERVED_DATA: &[&str] = &[
    "data-disclosure",
    "data-callout",
    "data-tab",
    "data-pagefind",
    "data-find",
    "data-from-log",
    "data-out",
    "data-lang",
    "data-wasm",
    "data-worker",
    "data-state",
    "data-ready",
    "data-index",
    "data-label",
    "data-copied",
];

/// Checks a heading `key=value` attribute. Keys are ASCII names that are
/// neither event handlers (`on...`), `style`, `id`, `class`, URL attributes
/// nor `data-` names errata uses ([`RESERVED_DATA`]); values hold no
/// quotes, `<`, `>`, `&`, `=` or controls.
pub(super) fn check_attribute(key: &str, value: Option<&str>) -> Result<(), String> {
    let lower = key.to_ascii_lowercase();
    let key_ok = key.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_'));
    if !key_ok
        || lower.starts_with("on")
        || matches!(lower.as_str(), "style" | "id" | "class")
        || crate::links::URL_ATTRIBUTES.contains(&lower.as_str())
    {
        return Err(format!(
            "heading attribute `{key}` is not allowed: use a plain name such as `data-level` (not `on...`, `style` or a URL attribute)"
        ));
    }
    if let Some(reserved) = RESERVED_DATA.iter().find(|r| lower.starts_with(**r)) {
        return Err(format!(
            "heading attribute `{key}` is not allowed: errata and its theme use `{reserved}` (the affiliate disclosure, callouts, tabs, search, scripts)"
        ));
    }
    match value {
        Some(v) if v.chars().any(|c| c.is_control() || "\"'<>&=`".contains(c)) => Err(format!(
            "heading attribute value `{v}` may not hold quotes, `<`, `>`, `&`, `=`, backticks or control characters"
        )),
        _ => Ok(()),
    }
}

/// The language of a code fence's info string (its first word), after
/// checking it: the language holds letters, digits and `_ + # . -`; the
/// rest of the line no `<`, `>` or control characters.
pub(super) fn fence_language(info: &str) -> Result<String, String> {
    let info = info.trim();
    let end = info.find([' ', '\t', ',', '{']).unwrap_or(info.len());
    let (lang, rest) = info.split_at(end);
    if !lang
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '+' | '#' | '.' | '-'))
    {
        return Err(format!(
            "code block language `{lang}` may hold only letters, digits, `_`, `+`, `#`, `.` and `-`"
        ));
    }
    if rest.chars().any(|c| c.is_control() || c == '<' || c == '>') {
        return Err(format!(
            "code block info `{info}` may not hold `<`, `>` or control characters"
        ));
    }
    Ok(lang.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_classes_and_attributes() {
        assert!(check_id("root-cause_2.x:y").is_ok());
        assert!(check_id("café").is_ok());
        for bad in ["a\"onclick=\"alert(2)", "a b", "a<b", "", "a'b", "a&b"] {
            assert!(check_id(bad).is_err(), "{bad}");
        }
        assert!(check_class("note-1").is_ok());
        assert!(check_class("x\"y").is_err());
        assert!(check_attribute("data-level", Some("2")).is_ok());
        assert!(check_attribute("hidden", None).is_ok());
        for (k, v) in [
            ("onclick", Some("x")),
            ("ONLOAD", Some("x")),
            ("style", Some("x")),
            ("href", Some("/x")),
            ("x\"", Some("1")),
            ("data-x", Some("a\"b")),
            ("data-x", Some("a=b")),
        ] {
            assert!(check_attribute(k, v).is_err(), "{k}={v:?}");
        }
    }

    #[test]
    fn no_data_attribute_errata_or_its_theme_reads_is_allowed_on_a_heading() {
        // Every `data-` name in the default theme and in the code that marks
        // or reads the page (tests aside).
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut files: Vec<std::path::PathBuf> = walkdir::WalkDir::new(root.join("themes/default"))
            .into_iter()
            .map(|e| e.unwrap().into_path())
            .filter(|p| p.extension().is_some_and(|e| e == "html" || e == "js"))
            .collect();
        for file in [
            "finish.rs",
            "sanitize.rs",
            "markdown/callouts.rs",
            "markdown/tabs.rs",
        ] {
            files.push(root.join("src").join(file));
        }
        let data = regex::Regex::new(r"data-[a-z][a-z-]*[a-z]").unwrap();
        let mut names = std::collections::BTreeSet::new();
        for file in &files {
            let text = std::fs::read_to_string(file).unwrap();
            let code = text.split("#[cfg(test)]").next().unwrap();
            names.extend(data.find_iter(code).map(|m| m.as_str().to_string()));
        }
        assert!(names.len() >= 10, "{names:?}");
        for name in &names {
            assert!(
                check_attribute(name, Some("1")).is_err(),
                "{name} is allowed"
            );
            assert!(
                check_attribute(&name.to_uppercase(), None).is_err(),
                "{name}"
            );
        }
        assert!(check_attribute("data-level", Some("1")).is_ok());
    }

    #[test]
    fn fence_info_strings() {
        assert_eq!(fence_language("bash").unwrap(), "bash");
        assert_eq!(fence_language("c++ title=\"x\"").unwrap(), "c++");
        assert_eq!(fence_language("rust,ignore").unwrap(), "rust");
        assert_eq!(fence_language("python {hl_lines=[1]}").unwrap(), "python");
        assert_eq!(fence_language("").unwrap(), "");
        for bad in ["bash\"onclick=x", "a<b", "sh <script>", "x\u{1}"] {
            assert!(fence_language(bad).is_err(), "{bad}");
        }
    }
}
