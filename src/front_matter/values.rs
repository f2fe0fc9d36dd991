//! Front-matter values checked while deserialising (dates, slugs, site
//! paths, URLs, template names), so that a bad value is reported at its own
//! line and column.

use std::fmt;

use serde::de;
use serde::{Deserialize, Deserializer, Serialize};

/// Defines a string newtype whose value is checked while deserialising, so a
/// bad value is reported at its own line and column.
macro_rules! checked_string {
    ($(#[$meta:meta])* $name:ident, $check:path) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
        #[serde(transparent)]
        pub struct $name(pub String);

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let value = String::deserialize(deserializer)?;
                $check(&value).map_err(de::Error::custom)?;
                Ok($name(value))
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }
    };
}

checked_string!(
    /// A date, `YYYY-MM-DD`, optionally followed by an RFC 3339 time.
    Date,
    check_date
);
checked_string!(
    /// One URL segment: letters, digits, `-`, `_` and `.`, never `.` or `..`.
    Slug,
    check_slug
);
checked_string!(
    /// A site-relative path such as `old/path/`: no `..`, no scheme.
    SitePath,
    check_site_path
);
checked_string!(
    /// An absolute `http` or `https` URL.
    HttpUrl,
    check_http_url
);
checked_string!(
    /// A template file name such as `page.html`.
    TemplateName,
    check_template_name
);

pub(super) fn check_date(value: &str) -> Result<(), String> {
    let bad = || format!("invalid date `{value}`: expected YYYY-MM-DD or an RFC 3339 date-time");
    let day = value.get(..10).ok_or_else(bad)?;
    let rest = &value[10..];
    let parts: Vec<&str> = day.split('-').collect();
    let [y, m, d] = parts.as_slice() else {
        return Err(bad());
    };
    let digits = |s: &str, n: usize| s.len() == n && s.bytes().all(|b| b.is_ascii_digit());
    if !(digits(y, 4) && digits(m, 2) && digits(d, 2)) {
        return Err(bad());
    }
    let (year, month, day): (u32, u32, u32) = (
        y.parse().unwrap_or(0),
        m.parse().unwrap_or(0),
        d.parse().unwrap_or(0),
    );
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let days = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return Err(bad()),
    };
    if day == 0 || day > days {
        return Err(bad());
    }
    if !(rest.is_empty() || rest.starts_with(['T', 't', ' ']) && rest.len() >= 6) {
        return Err(bad());
    }
    Ok(())
}

/// An output path segment named like the marker errata writes into every
/// output folder would replace (or be replaced by) that marker. `kind` names
/// the value as the other messages do (`slug`, `path`).
pub(super) fn check_not_reserved(kind: &str, value: &str, segment: &str) -> Result<(), String> {
    if segment == crate::output_dir::MARKER {
        return Err(format!(
            "invalid {kind} `{value}`: `{segment}` is reserved for the marker errata writes into every output folder"
        ));
    }
    Ok(())
}

pub(super) fn check_slug(value: &str) -> Result<(), String> {
    check_not_reserved("slug", value, value)?;
    let ok = !value.is_empty()
        && value != "."
        && value != ".."
        && value
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if ok {
        Ok(())
    } else {
        Err(format!(
            "invalid slug `{value}`: use one URL segment of letters, digits, `-`, `_` and `.`"
        ))
    }
}

pub(super) fn check_site_path(value: &str) -> Result<(), String> {
    let trimmed = value.trim_matches('/');
    for segment in trimmed.split('/') {
        check_not_reserved("path", value, segment)?;
    }
    let ok = !trimmed.is_empty()
        && !value.contains(['\\', '?', '#', ':'])
        && trimmed
            .split('/')
            .all(|segment| check_slug(segment).is_ok());
    if ok {
        Ok(())
    } else {
        Err(format!(
            "invalid path `{value}`: use a site path like `old/page/` without `..`, `\\` or a scheme"
        ))
    }
}

pub(super) fn check_http_url(value: &str) -> Result<(), String> {
    let lower = value.trim_start().to_ascii_lowercase();
    if !(lower.starts_with("https://") || lower.starts_with("http://")) {
        return Err(format!(
            "invalid URL `{value}`: only absolute http(s) URLs are allowed"
        ));
    }
    url::Url::parse(value.trim())
        .map(|_| ())
        .map_err(|e| format!("invalid URL `{value}`: {e}"))
}

pub(super) fn check_template_name(value: &str) -> Result<(), String> {
    let ok = value.ends_with(".html") && value.split('/').all(|s| check_slug(s).is_ok());
    if ok {
        Ok(())
    } else {
        Err(format!(
            "invalid template name `{value}`: expected a file such as `page.html`"
        ))
    }
}
