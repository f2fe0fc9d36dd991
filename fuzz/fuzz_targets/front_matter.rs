//! Front matter: any file text through the parse stage (split, every
//! problem in the YAML, located). Nothing may panic, every problem must be
//! located inside the file, and well-formed front matter must parse.
#![no_main]

use libfuzzer_sys::fuzz_target;

use errata::front_matter::{self, PageFrontMatter, SectionFrontMatter};
use errata::load::{SourceFile, SourceKind};

fuzz_target!(|text: &str| {
    let lines = text.lines().count() + 1;
    for kind in [SourceKind::Page, SourceKind::Section] {
        let file = SourceFile::new(
            "content/fuzz.md".into(),
            "fuzz.md".into(),
            kind,
            text.to_string(),
        );
        let parsed = errata::parse::parse(vec![file], true);
        for d in &parsed.diagnostics {
            assert!(d.line >= 1 && d.line <= lines, "{d} is outside the file");
            assert!(d.col >= 1, "{d}");
        }
        let outcomes = parsed.pages.len() + parsed.sections.len() + parsed.broken.len();
        assert_eq!(outcomes, 1, "a file is parsed or broken, never lost");
        assert_eq!(
            parsed.broken.is_empty(),
            !parsed.diagnostics.iter().any(|d| d.is_error()),
            "a broken file has errors, and only a broken one: {:?}",
            parsed.diagnostics
        );
    }
    if let Ok(split) = front_matter::split(text) {
        for result in [
            front_matter::parse_all::<PageFrontMatter>(&split).err(),
            front_matter::parse_all::<SectionFrontMatter>(&split).err(),
        ]
        .into_iter()
        .flatten()
        {
            assert!(!result.is_empty());
            for e in result {
                assert!(e.offset <= text.len(), "offset past the end");
            }
        }
        // Every node's key and value lie inside the front matter, on
        // character boundaries.
        let end = split.yaml_offset + split.yaml.len();
        for node in front_matter::Spans::of(split.yaml, split.yaml_offset).nodes() {
            for at in node.key.into_iter().chain([node.value.start, node.value.end]) {
                assert!(at >= split.yaml_offset && at <= end, "{node:?} outside the YAML");
                assert!(text.is_char_boundary(at), "{node:?} splits a character");
            }
        }
    }
});
