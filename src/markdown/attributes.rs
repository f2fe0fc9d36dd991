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

/// Checks a heading `key=value` attribute. Keys are ASCII names that are
/// neither event handlers (`on...`), `style`, `id`, `class` nor URL
/// attributes; values hold no quotes, `<`, `>`, `&`, `=` or controls.
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
