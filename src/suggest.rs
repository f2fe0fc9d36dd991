//! "Did you mean" hints for unknown keys.

/// Edit distance between two short strings (Levenshtein, by characters).
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (diagonal + usize::from(ca != cb))
                .min(row[j] + 1)
                .min(above + 1);
            diagonal = above;
        }
    }
    row[b.len()]
}

/// The candidate closest to `unknown`, if it is close enough to be a typo.
pub(crate) fn closest<'c>(unknown: &str, candidates: &[&'c str]) -> Option<&'c str> {
    candidates
        .iter()
        .map(|c| (distance(unknown, c), *c))
        .filter(|(d, c)| *d <= (c.len() / 3).max(2))
        .min()
        .map(|(_, c)| c)
}

/// Rewrites serde's "unknown field `x`, expected one of `a`, `b`" message
/// into our wording plus a help line naming the closest key.
///
/// serde only reports unknown fields through this message, so the field name
/// and the expected names are read back from the backticked words in it.
pub(crate) fn unknown_field(message: &str) -> Option<(String, String)> {
    let rest = message.strip_prefix("unknown field `")?;
    let mut parts = rest.split('`');
    let unknown = parts.next()?;
    let expected: Vec<&str> = parts.skip(1).step_by(2).collect();
    let known = expected.join(", ");
    let help = match closest(unknown, &expected) {
        Some(best) => format!("did you mean `{best}`? (known keys: {known})"),
        None => format!("known keys: {known}"),
    };
    Some((format!("unknown key `{unknown}`"), help))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_the_nearest_key() {
        assert_eq!(closest("tagz", &["title", "tags", "tools"]), Some("tags"));
        assert_eq!(
            closest("signatrue", &["signature", "patterns"]),
            Some("signature")
        );
        assert_eq!(closest("zzzzzz", &["title", "tags"]), None);
    }

    #[test]
    fn rewrites_serde_unknown_field_messages() {
        let (msg, help) =
            unknown_field("unknown field `tagz`, expected one of `title`, `tags`, `tools`")
                .unwrap();
        assert_eq!(msg, "unknown key `tagz`");
        assert_eq!(
            help,
            "did you mean `tags`? (known keys: title, tags, tools)"
        );
        let (_, help) = unknown_field("unknown field `titel`, expected `title` or `x`").unwrap();
        assert!(help.starts_with("did you mean `title`?"), "{help}");
        assert!(unknown_field("missing field `title`").is_none());
    }
}
