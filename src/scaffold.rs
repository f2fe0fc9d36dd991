//! `errata new`: a new triage page from an archetype, with its front matter
//! filled in from the error message.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use crate::config::Config;
use crate::slug::slugify;

/// What `errata new` was asked for.
#[derive(Debug, Clone)]
pub struct NewPage {
    /// The error message, as users see it.
    pub message: String,
    /// Section folder under `content/`, such as `oom` or `cuda/drivers`.
    pub section: String,
    /// Tools the fixes cover (taxonomy terms; one remediation subsection each).
    pub tools: Vec<String>,
    /// Publication date, `YYYY-MM-DD`.
    pub date: String,
    /// Write a page bundle (`<slug>/index.md`, a folder for the page's
    /// images and logs) instead of `<slug>.md`.
    pub bundle: bool,
}

/// The page that was written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Created {
    /// Path of the new file.
    pub path: PathBuf,
    /// The URL it will have once built.
    pub url: String,
}

/// The longest slug made from a message, in characters.
const SLUG_LIMIT: usize = 60;

/// A regular expression that matches `message` literally, as the content of
/// a single-quoted YAML scalar.
pub fn pattern_for(message: &str) -> String {
    let mut out = String::with_capacity(message.len() + 8);
    for c in message.trim().chars() {
        if "\\.+*?()|[]{}^$#&-~".contains(c) {
            out.push('\\');
        }
        if c == '\'' {
            out.push('\'');
        }
        out.push(c);
    }
    out
}

/// A slug for `message`: its words, cut at a word boundary.
pub fn slug_for(message: &str) -> String {
    let full = slugify(message);
    if full.chars().count() <= SLUG_LIMIT {
        return full;
    }
    let mut slug = String::new();
    for word in full.split('-') {
        let room = SLUG_LIMIT.saturating_sub(slug.chars().count() + usize::from(!slug.is_empty()));
        if word.chars().count() > room {
            // A first word longer than the limit is cut; a later one is
            // left out whole.
            if slug.is_empty() {
                slug.extend(word.chars().take(SLUG_LIMIT));
            }
            break;
        }
        if !slug.is_empty() {
            slug.push('-');
        }
        slug.push_str(word);
    }
    slug
}

/// The archetype: the site's `archetypes/triage.md`, else the theme's.
fn archetype(config: &Config) -> Result<(PathBuf, String), String> {
    for dir in [
        config.root.join("archetypes"),
        config.theme_dir.join("archetypes"),
    ] {
        let path = dir.join("triage.md");
        if path.is_file() {
            let text = std::fs::read_to_string(&path)
                .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
            return Ok((path, text));
        }
    }
    Err("no archetypes/triage.md in the site or its theme".into())
}

/// Writes a new page; refuses to overwrite a file or to leave `content/`.
pub fn create(config: &Config, page: &NewPage) -> Result<Created, String> {
    let message = page.message.trim();
    if message.is_empty() {
        return Err("the error message is empty".into());
    }
    let section = page.section.trim_matches('/');
    let segments: Vec<&str> = section.split('/').filter(|s| !s.is_empty()).collect();
    let plain = |s: &&str| {
        *s != "."
            && *s != ".."
            && s.chars()
                .all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '.'))
    };
    if Path::new(&page.section).is_absolute() || !segments.iter().all(plain) {
        return Err(format!(
            "refusing section `{}`: it must be a folder inside content/",
            page.section
        ));
    }
    // The build skips these folders (see `load`), so the page would never appear.
    if let Some(hidden) = segments.iter().find(|s| s.starts_with(['.', '_'])) {
        return Err(format!(
            "refusing section `{}`: the build skips folders whose names start with `.` or `_` (`{hidden}`), so the page would never be published",
            page.section
        ));
    }
    let slug = slug_for(message);
    if slug.is_empty() {
        return Err("the error message has no letters or digits to make a file name from".into());
    }
    let mut dir = config.content_dir();
    segments.iter().for_each(|s| dir.push(s));
    let (file, bundle) = (dir.join(format!("{slug}.md")), dir.join(slug.as_str()));
    let bundle_index = bundle.join(crate::bundle::BUNDLE_INDEX);
    let (path, other) = if page.bundle {
        (bundle_index, file)
    } else {
        (file, bundle_index)
    };
    // The other form would have the same URL: the build would refuse both.
    if other.exists() {
        return Err(format!(
            "{} already exists at that URL; errata new never overwrites a page",
            other.display()
        ));
    }

    stays_inside(&config.content_dir(), &path)?;

    // A tool's name becomes a heading and a comment in a code block: what
    // Markdown would read there (attributes, links, markup, the fence)
    // would make a page the build rejects, or one that says something else.
    if let Some(bad) = page.tools.iter().find(|t| {
        t.chars()
            .any(|c| c.is_control() || "`{}<>[]\\*|".contains(c))
    }) {
        return Err(format!(
            "refusing tool name `{}`: it may not hold control characters or any of ` {{ }} < > [ ] \\ * |",
            bad.escape_debug()
        ));
    }

    let (archetype_path, text) = archetype(config)?;
    let tool_slugs: Vec<String> = page
        .tools
        .iter()
        .map(|t| t.trim())
        .filter(|t| !t.is_empty())
        .map(|t| format!("\"{}\"", crate::escape::yaml_double(t)))
        .collect();
    let tool_names: Vec<&str> = page
        .tools
        .iter()
        .map(|t| t.trim())
        .filter(|t| !t.is_empty())
        .collect();
    let mut context = tera::Context::new();
    context.insert("title", &crate::escape::yaml_double(message));
    context.insert("signature", &crate::escape::yaml_double(message));
    context.insert("pattern", &pattern_for(message));
    context.insert("date", &page.date);
    context.insert("tools", &tool_slugs);
    context.insert("tool_names", &tool_names);
    context.insert("section", &segments.join("/"));
    let body = tera::Tera::one_off(&text, &context, false)
        .map_err(|e| format!("{}: {e}", archetype_path.display()))?;

    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)
            .map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
    }
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&path)
        .map_err(|e| {
            if e.kind() == std::io::ErrorKind::AlreadyExists {
                format!(
                    "{} already exists; errata new never overwrites a page",
                    path.display()
                )
            } else {
                format!("cannot create {}: {e}", path.display())
            }
        })?;
    file.write_all(body.as_bytes())
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    let dir_url: String = segments
        .iter()
        .map(|s| format!("{}/", slugify(s)))
        .collect();
    Ok(Created {
        path,
        url: config.absolute(&format!("{dir_url}{slug}/")),
    })
}

/// Refuses `path` (under `content`) when a folder on the way to it is a
/// symbolic link that leads out of `content`: creating the folders and the
/// file would follow it, and write outside the site.
fn stays_inside(content: &Path, path: &Path) -> Result<(), String> {
    let Ok(rest) = path.strip_prefix(content) else {
        return Err(format!(
            "{} is not inside {}",
            path.display(),
            content.display()
        ));
    };
    let mut at = content.to_path_buf();
    let folders = rest.parent().into_iter().flat_map(Path::components);
    for part in folders {
        at.push(part);
        let Ok(meta) = std::fs::symlink_metadata(&at) else {
            // Not there yet: created below, as a real folder.
            return Ok(());
        };
        if !meta.file_type().is_symlink() {
            continue;
        }
        let inside = match (at.canonicalize(), content.canonicalize()) {
            (Ok(target), Ok(content)) => target.starts_with(content),
            _ => false,
        };
        if !inside {
            return Err(format!(
                "refusing to write through {}: it is a symbolic link that leads out of content/",
                at.display()
            ));
        }
    }
    Ok(())
}

/// Today's date (UTC) as `YYYY-MM-DD`.
pub fn today() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    civil_date(secs / 86_400)
}

/// The proleptic Gregorian date of a day count since 1970-01-01
/// (Howard Hinnant's `civil_from_days`).
fn civil_date(days: u64) -> String {
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sections_the_build_skips_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("site.toml"),
            "title = \"T\"\nbase_url = \"https://example.org/\"\n",
        )
        .unwrap();
        let theme = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("themes");
        std::os::unix::fs::symlink(theme, dir.path().join("themes")).unwrap();
        let config = Config::load(dir.path()).unwrap();
        let page = |section: &str| NewPage {
            message: "SomeError: broke".into(),
            section: section.into(),
            tools: vec![],
            date: "2026-11-30".into(),
            bundle: section.ends_with("cuda-bundle"),
        };
        for tool in [
            "x {#root-cause}",
            "a {onclick=x}",
            "[l](javascript:x)",
            "a\nb",
            "```",
            "<b>",
        ] {
            let e = create(
                &config,
                &NewPage {
                    tools: vec!["Ollama".into(), tool.into()],
                    ..page("oom")
                },
            )
            .unwrap_err();
            assert!(e.contains("refusing tool name"), "{tool}: {e}");
        }
        for hidden in ["_drafts", ".git", "oom/_old", "a/.b/c", "_x/"] {
            let e = create(&config, &page(hidden)).unwrap_err();
            assert!(e.contains("skips folders"), "{hidden}: {e}");
        }
        assert!(!dir.path().join("content").exists(), "nothing written");
        let made = create(
            &config,
            &NewPage {
                tools: vec![
                    "llama.cpp".into(),
                    "vLLM".into(),
                    "HF Transformers".into(),
                    "C#".into(),
                ],
                ..page("oom/cuda")
            },
        )
        .unwrap();
        assert!(made.path.ends_with("content/oom/cuda/someerror-broke.md"));
        let made = create(&config, &page("oom/cuda-bundle")).unwrap();
        assert!(
            made.path
                .ends_with("content/oom/cuda-bundle/someerror-broke/index.md")
        );
        assert_eq!(
            made.url,
            "https://example.org/oom/cuda-bundle/someerror-broke/"
        );
        // Either form refuses when the other one is there (one URL, two pages).
        let e = create(
            &config,
            &NewPage {
                bundle: false,
                ..page("oom/cuda-bundle")
            },
        )
        .unwrap_err();
        assert!(e.contains("someerror-broke/index.md already exists"), "{e}");
        let e = create(
            &config,
            &NewPage {
                bundle: true,
                ..page("oom/cuda")
            },
        )
        .unwrap_err();
        assert!(e.contains("someerror-broke.md already exists"), "{e}");
    }

    #[test]
    fn civil_dates() {
        assert_eq!(civil_date(0), "1970-01-01");
        assert_eq!(civil_date(20_786), "2026-11-29");
        assert_eq!(civil_date(19_782), "2024-02-29");
    }

    #[test]
    fn patterns_escape_regex_syntax_and_yaml_quotes() {
        assert_eq!(
            pattern_for("CUDA out of memory. Tried (2.5 GiB)"),
            "CUDA out of memory\\. Tried \\(2\\.5 GiB\\)"
        );
        assert_eq!(pattern_for("can't [x]"), "can''t \\[x\\]");
    }

    #[test]
    fn slugs_are_cut_at_word_boundaries() {
        assert_eq!(
            slug_for("RuntimeError: CUDA out of memory"),
            "runtimeerror-cuda-out-of-memory"
        );
        let long = slug_for(&"word ".repeat(40));
        assert!(long.len() <= SLUG_LIMIT && !long.ends_with('-'), "{long}");
        // A first word longer than the limit (a hash, a long identifier)
        // is cut, not dropped with everything after it.
        let hash = "f".repeat(64);
        assert_eq!(
            slug_for(&format!("{hash} checksum mismatch")),
            "f".repeat(60)
        );
        assert_eq!(slug_for(&"a".repeat(60)), "a".repeat(60));
        assert_eq!(slug_for(&"a".repeat(61)), "a".repeat(60));
        assert_eq!(slug_for(&"é".repeat(300)).chars().count(), 60);
        assert_eq!(
            slug_for(&format!("{} x y", "a".repeat(58))),
            format!("{}-x", "a".repeat(58))
        );
    }

    #[test]
    fn a_section_that_is_a_link_out_of_content_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let site = dir.path().join("site");
        std::fs::create_dir_all(site.join("content/oom")).unwrap();
        std::fs::write(
            site.join("site.toml"),
            "title = \"T\"\nbase_url = \"https://example.org/\"\n",
        )
        .unwrap();
        let theme = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("themes");
        std::os::unix::fs::symlink(theme, site.join("themes")).unwrap();
        let outside = dir.path().join("outside");
        std::fs::create_dir_all(&outside).unwrap();
        std::os::unix::fs::symlink(&outside, site.join("content/ext")).unwrap();
        std::os::unix::fs::symlink(&outside, site.join("content/oom/deep")).unwrap();
        std::os::unix::fs::symlink(site.join("content/oom"), site.join("content/alias")).unwrap();
        let config = Config::load(&site).unwrap();
        let page = |section: &str, bundle: bool| NewPage {
            message: "SomeError: broke".into(),
            section: section.into(),
            tools: vec![],
            date: "2026-11-30".into(),
            bundle,
        };
        for (section, bundle) in [
            ("ext", false),
            ("ext/sub", true),
            ("oom/deep", false),
            ("oom/deep/x", true),
        ] {
            let e = create(&config, &page(section, bundle)).unwrap_err();
            assert!(
                e.contains("symbolic link that leads out of content/"),
                "{section}: {e}"
            );
        }
        assert_eq!(
            std::fs::read_dir(&outside).unwrap().count(),
            0,
            "nothing written outside"
        );
        // A page's own folder that leads out (the bundle form) is refused too.
        std::os::unix::fs::symlink(&outside, site.join("content/oom/someerror-broke")).unwrap();
        let e = create(&config, &page("oom", true)).unwrap_err();
        assert!(e.contains("leads out of content/"), "{e}");
        assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 0);
        // A link that stays inside content/ is a folder like any other.
        let made = create(&config, &page("alias", false)).unwrap();
        assert!(
            site.join("content/oom/someerror-broke.md").is_file(),
            "{made:?}"
        );
    }

    #[test]
    fn yaml_strings_are_escaped() {
        assert_eq!(crate::escape::yaml_double(r#"a "b" \c"#), r#"a \"b\" \\c"#);
    }
}
