//! Step 1: turn one raw log line into the text a pattern should see.
//!
//! - carriage returns: a terminal shows only what was written after the last
//!   `\r` (tqdm and other progress bars redraw a line that way), and a
//!   trailing `\r` is the rest of a CRLF line ending;
//! - ANSI escape sequences (colours, cursor movement, OSC titles) are removed;
//! - line prefixes that log collectors and launchers add are removed, again
//!   and again while one is found (`web-1  | 2024-05-01T12:00:00Z [rank0]: ...`):
//!   ISO 8601 and RFC 3339 timestamps (GitHub Actions, `kubectl logs
//!   --timestamps`, the CRI log format `... stdout F`, Python's `logging`;
//!   seconds optional, `t`/`z` in either case, then spaces or a tab),
//!   syslog (`May  1 12:00:00 host kernel: `) and `journalctl -o short-iso`
//!   (`2024-05-01T12:00:00+0200 host kernel: `), glog (`W1019 19:13:49.873734
//!   1405 file.py:350] `, PyTorch's C++ warnings), `[rank0]:` and `[default0]:`
//!   (torch.distributed), `[1,0]<stderr>:` (mpirun), vLLM's logger
//!   (`INFO 05-01 12:00:00 file.py:123] ` and `... [file.py:123] `), vLLM and
//!   Ray worker tags (`(VllmWorkerProcess pid=123) `), `kubectl logs
//!   --prefix` (`[pod/name/container] `) and Docker Compose
//!   (`container-name  | `);
//! - a tqdm progress bar left in front of the text is removed;
//! - a byte-order mark (U+FEFF) at the start of a line is removed.

use std::borrow::Cow;
use std::sync::OnceLock;

use regex::Regex;

/// One line prefix, anchored at the start; see the module documentation.
fn prefix() -> &'static Regex {
    static PREFIX: OnceLock<Regex> = OnceLock::new();
    PREFIX.get_or_init(|| {
        Regex::new(
            r"(?x)^(?:
              # journalctl -o short-iso and short-iso-precise: host and
              # identifier follow, as in syslog
              \s*\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?[+-]\d{2}:?\d{2}\ [^\s\[(]\S*\ (?:[\w.@/-]+\[\d+\]|kernel):[\ \t]+
            | # ISO 8601 / RFC 3339 (seconds optional, `t` and `z` in either
              # case), bracketed or not, with the CRI stream tag
              \s*\[?\d{4}-\d{2}-\d{2}[Tt\ ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?
                (?:\ ?(?:[Zz]|UTC|[+-]\d{2}(?::?\d{2})?))?\]?
                (?:\ (?:stdout|stderr)\ [FP])?(?:[\ \t]?[|:-])?[\ \t]+
            | # syslog and journald's short format
              [A-Z][a-z]{2}\ [\ \d]\d\ \d{2}:\d{2}:\d{2}\ \S+\ [^:\s]+:[\ \t]+
            | # torch.distributed ranks and torchrun's --tee
              \[(?:rank|default)\d+\]:\ ?
            | # mpirun --tag-output
              \[\d+,\d+\]<std(?:out|err)>:\ ?
            | # vLLM and Ray worker tags
              \((?:[\w.-]+\ ){0,3}(?:rank=\d+,?\ )?pid=\d+(?:,\ ip=[\w.:]+)?\)\ +
            | # glog (absl, PyTorch's C++ warnings), bracketed or not
              \[?[IWEF]\d{3,4}\ \d{2}:\d{2}:\d{2}\.\d+(?:\ +\d+)?\ [\w.-]+:\d+\]\ ?
            | # vLLM's logger
              (?:DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL)\ +\d{2}-\d{2}\ \d{2}:\d{2}:\d{2}(?:\.\d+)?\ +\[?[\w./-]+:\d+\]\ ?
            | # kubectl logs --prefix
              \[pod/[^\]\s]+\]\ ?
            | # Docker Compose
              [A-Za-z0-9][\w.-]*\ +\|\ ?
            )",
        )
        .expect("the prefix pattern compiles")
    })
}

/// A tqdm bar (`Loading shards:  50%|#####     | 1/2 [00:03<00:03,  3.41s/it]`).
fn progress_bar() -> &'static Regex {
    static BAR: OnceLock<Regex> = OnceLock::new();
    BAR.get_or_init(|| {
        Regex::new(r"^[^|]{0,80}?\d{1,3}%\|[^|]*\|[^\[\n]{0,40}\[[^\]]*\]\s*")
            .expect("the progress-bar pattern compiles")
    })
}

/// The text a terminal would show for `raw` after its last carriage return.
pub fn after_carriage_returns(raw: &str) -> &str {
    let line = raw.trim_end_matches('\r');
    line.rfind('\r').map_or(line, |i| &line[i + 1..])
}

/// Removes ANSI escape sequences (ECMA-48): CSI (`ESC [ ... final`, or
/// the 8-bit U+009B), strings (OSC `ESC ]`, DCS `ESC P`, SOS, PM and APC,
/// to BEL or `ESC \`; OSC also as U+009D), and the other escapes with
/// their intermediate bytes (`ESC ( B`, which `tput sgr0` writes).
pub fn strip_ansi(line: &str) -> Cow<'_, str> {
    if !line.contains(['\x1b', '\u{9b}', '\u{9d}']) {
        return Cow::Borrowed(line);
    }
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        let kind = match c {
            '\x1b' => chars.next(),
            '\u{9b}' => Some('['),
            '\u{9d}' => Some(']'),
            _ => {
                out.push(c);
                continue;
            }
        };
        match kind {
            Some('[') => {
                // Parameters and intermediates, then one final byte in @..~.
                for c in chars.by_ref() {
                    if ('@'..='~').contains(&c) {
                        break;
                    }
                }
            }
            Some(']' | 'P' | 'X' | '^' | '_') => {
                while let Some(c) = chars.next() {
                    if c == '\x07' || c == '\u{9c}' {
                        break;
                    }
                    if c == '\x1b' && chars.peek() == Some(&'\\') {
                        chars.next();
                        break;
                    }
                }
            }
            // Intermediate bytes, then the final one.
            Some(' '..='/') => {
                for c in chars.by_ref() {
                    if !(' '..='/').contains(&c) {
                        break;
                    }
                }
            }
            _ => {}
        }
    }
    Cow::Owned(out)
}

/// Whether `text` has a `|` right after a `before`.
fn bar_after(text: &[u8], before: u8) -> bool {
    memchr::memchr_iter(b'|', text).any(|i| i > 0 && text[i - 1] == before)
}

/// Whether `line` can start with one of the [`prefix`] pattern's prefixes:
/// a few byte tests that are true of every line the pattern matches, so
/// that most lines (`  File "x.py", line 3`, `RuntimeError: ...`) skip
/// the regex. Each arm names the alternatives it lets through.
fn may_have_prefix(line: &str) -> bool {
    let b = line.as_bytes();
    // Docker Compose (`name  | `): the only one that can start with a
    // lower-case letter.
    if bar_after(b, b' ') {
        return true;
    }
    match b.first() {
        None => false,
        // Brackets and worker tags; ISO 8601 starting with a digit.
        Some(b'[' | b'(' | b'0'..=b'9') => true,
        Some(b'a'..=b'z') => false,
        Some(&first @ b'A'..=b'Z') => {
            let syslog = b.len() > 3
                && b[1].is_ascii_lowercase()
                && b[2].is_ascii_lowercase()
                && b[3] == b' ';
            // `\d` is any Unicode digit: a non-ASCII byte may start one.
            let glog = matches!(first, b'I' | b'W' | b'E' | b'F')
                && b.get(1)
                    .is_some_and(|c| c.is_ascii_digit() || !c.is_ascii());
            let level = ["DEBUG", "INFO", "WARN", "ERROR", "CRITICAL"]
                .iter()
                .any(|level| line.starts_with(level));
            syslog || glog || level
        }
        // White space (ASCII or not) before an ISO 8601 timestamp, whose
        // first digit may be any Unicode digit.
        Some(_) => line
            .trim_start()
            .chars()
            .next()
            .is_some_and(|c| c == '[' || c.is_ascii_digit() || !c.is_ascii()),
    }
}

/// Removes the launcher and collector prefixes, and a leading progress bar.
pub fn strip_prefixes(line: &str) -> &str {
    let mut rest = line;
    // However many are stacked: each one taken shortens the line.
    loop {
        if !may_have_prefix(rest) {
            break;
        }
        match prefix().find(rest) {
            Some(m) if !m.is_empty() => rest = &rest[m.end()..],
            _ => break,
        }
    }
    // Every bar has a percentage right before its first `|`.
    if !bar_after(rest.as_bytes(), b'%') {
        return rest;
    }
    match progress_bar().find(rest) {
        Some(m) => &rest[m.end()..],
        None => rest,
    }
}

/// The whole of step 1 for one line (without its `\n`).
pub fn normalise(raw: &str) -> String {
    normalised(raw).into_owned()
}

/// [`normalise`], borrowing from `raw` unless an ANSI escape had to be
/// removed (most lines have none: they are not copied).
pub fn normalised(raw: &str) -> Cow<'_, str> {
    // A byte-order mark starts the first line of a file that has one (a
    // UTF-8 file from Windows), and of each file when logs are joined.
    let shown = after_carriage_returns(raw).trim_start_matches('\u{feff}');
    match strip_ansi(shown) {
        Cow::Borrowed(plain) => Cow::Borrowed(strip_prefixes(plain).trim_end()),
        Cow::Owned(plain) => Cow::Owned(strip_prefixes(&plain).trim_end().to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ERR: &str = "torch.OutOfMemoryError: CUDA out of memory.";

    #[test]
    fn ansi_colours_and_titles_are_removed() {
        assert_eq!(
            normalise(&format!("\x1b[31m\x1b[1m{ERR}\x1b[0m")),
            ERR,
            "SGR colours"
        );
        assert_eq!(normalise(&format!("\x1b]0;title\x07{ERR}")), ERR, "OSC");
        assert_eq!(normalise(&format!("\x1b]0;t\x1b\\{ERR}\x1b[K")), ERR);
        // `tput sgr0` (a character-set escape with an intermediate byte),
        // 8-bit CSI and OSC, a DCS string, a keypad escape.
        assert_eq!(normalise(&format!("\x1b(B\x1b[m[rank0]: {ERR}")), ERR);
        assert_eq!(normalise(&format!("\u{9b}31m{ERR}\u{9b}0m")), ERR);
        assert_eq!(normalise(&format!("\u{9d}0;t\x07{ERR}")), ERR);
        assert_eq!(normalise(&format!("\x1bPq#0\x1b\\\x1b={ERR}")), ERR);
    }

    #[test]
    fn progress_bars_keep_only_what_the_terminal_shows() {
        let raw = format!(
            "  0%|          | 0/10 [00:00<?, ?it/s]\r 50%|#####     | 5/10 [00:01<00:01,  4.2it/s]\r{ERR}"
        );
        assert_eq!(normalise(&raw), ERR);
        // The traceback written right after the bar, on the same line.
        let raw = format!(
            "Loading checkpoint shards:  50%|█████     | 1/2 [00:03<00:03,  3.41s/it]{ERR}"
        );
        assert_eq!(normalise(&raw), ERR);
        // A bar alone carries no error.
        assert_eq!(
            normalise("100%|##########| 10/10 [00:02<00:00,  4.2it/s]"),
            ""
        );
    }

    #[test]
    fn crlf_is_a_line_ending() {
        assert_eq!(normalise(&format!("{ERR}\r")), ERR);
        assert_eq!(normalise(&format!("{ERR}\r\r")), ERR);
    }

    #[test]
    fn timestamps_are_removed() {
        for prefix in [
            "2024-05-01T12:00:00Z ",
            "2024-05-01T12:00:00.1234567Z ", // GitHub Actions
            "2024-05-01T12:00:00.123456789Z stderr F ", // CRI (Kubernetes node logs)
            "2024-05-01T12:00:00+02:00 ",
            "2024-05-01 12:00:00,123 ",
            "[2024-05-01 12:00:00] ",
            "2024-05-01 12:00:00.123 | ",
            "2024-05-01t12:00:00.5z ",   // lower case, as RFC 3339 allows
            "2024-05-01T12:00Z ",        // no seconds
            "2024-05-01 12:00:00,123\t", // a tab after it
            "2024-05-01T12:00:00+0200 gpu-node python3[4242]: ", // journalctl -o short-iso
            "2024-05-01T12:00:00.123456+02:00 gpu-node kernel: ",
            "\u{feff}2024-05-01T12:00:00Z ", // a byte-order mark first
        ] {
            assert_eq!(normalise(&format!("{prefix}{ERR}")), ERR, "{prefix:?}");
        }
    }

    #[test]
    fn an_offset_timestamp_takes_no_error_text_for_a_host() {
        // journalctl's host and identifier are not read into the line after
        // another tool's timestamp with an offset.
        for line in [
            "2024-05-01T12:00:00+0200 [rank0]: RuntimeError: CUDA error: boom",
            "2024-05-01T12:00:00+02:00 RuntimeError: CUDA error: boom",
        ] {
            assert_eq!(normalise(line), "RuntimeError: CUDA error: boom", "{line}");
        }
        // Two words then a colon are not a host and an identifier unless
        // the second is `name[pid]` or `kernel`, as journalctl writes them.
        for (line, kept) in [
            (
                "2024-05-01T12:00:00+02:00 OSError: libcudart.so.12: cannot open shared object file",
                "OSError: libcudart.so.12: cannot open shared object file",
            ),
            (
                "2024-05-01T12:00:00+0200 ERROR RuntimeError: CUDA error: boom",
                "ERROR RuntimeError: CUDA error: boom",
            ),
            (
                "2024-05-01T12:00:00+02:00 ERROR torch.OutOfMemoryError: CUDA out of memory.",
                "ERROR torch.OutOfMemoryError: CUDA out of memory.",
            ),
        ] {
            assert_eq!(normalise(line), kept, "{line}");
        }
    }

    #[test]
    fn syslog_prefixes_are_removed() {
        assert_eq!(
            normalise("May  1 12:00:00 gpu-node kernel: NVRM: Xid (PCI:0000:01:00): 79"),
            "NVRM: Xid (PCI:0000:01:00): 79"
        );
        assert_eq!(
            normalise(&format!("Dec 12 03:04:05 host python3[4242]: {ERR}")),
            ERR
        );
    }

    #[test]
    fn distributed_rank_prefixes_are_removed() {
        assert_eq!(normalise(&format!("[rank0]: {ERR}")), ERR);
        assert_eq!(normalise(&format!("[rank13]:{ERR}")), ERR);
        assert_eq!(normalise(&format!("[default3]:{ERR}")), ERR);
        assert_eq!(normalise(&format!("[1,0]<stderr>:{ERR}")), ERR);
    }

    #[test]
    fn vllm_prefixes_are_removed() {
        assert_eq!(
            normalise(&format!("INFO 05-01 12:00:00 llm_engine.py:123] {ERR}")),
            ERR
        );
        assert_eq!(
            normalise(&format!("ERROR 05-01 12:00:00.123 [core.py:586] {ERR}")),
            ERR
        );
        assert_eq!(
            normalise(&format!(
                "(VllmWorkerProcess pid=1234) ERROR 05-01 12:00:00 multiproc_worker_utils.py:226] {ERR}"
            )),
            ERR
        );
        assert_eq!(
            normalise(&format!("(RayWorkerWrapper pid=77, ip=10.0.0.2) {ERR}")),
            ERR
        );
        assert_eq!(
            normalise(&format!("(VllmWorker rank=5 pid=3073) {ERR}")),
            ERR
        );
    }

    #[test]
    fn glog_prefixes_are_removed() {
        assert_eq!(
            normalise(&format!(
                "W1019 19:13:49.873734 140551252768576 submission_runner.py:350] {ERR}"
            )),
            ERR
        );
        assert_eq!(
            normalise(&format!(
                "[rank0]:[W914 04:53:45.615225908 ProcessGroupNCCL.cpp:1476] {ERR}"
            )),
            ERR
        );
    }

    #[test]
    fn docker_and_kubernetes_prefixes_are_removed() {
        assert_eq!(normalise(&format!("vllm-server-1  | {ERR}")), ERR);
        assert_eq!(
            normalise(&format!("web_1 | 2024-05-01T12:00:00Z [rank0]: {ERR}")),
            ERR,
            "stacked prefixes"
        );
        // Seven deep, and worker tags as Ray and vLLM write them.
        assert_eq!(
            normalise(&format!(
                "svc-1  | 2024-05-01T12:00:00Z [pod/a/b] [rank0]: [1,0]<stderr>:(VllmWorker rank=0 pid=42) INFO 05-01 12:00:00 file.py:123] {ERR}"
            )),
            ERR
        );
        for tag in [
            "(pid=42)",
            "(pid=42, ip=10.0.0.1)",
            "(RayWorkerWrapper pid=77, ip=fd00::1)",
            "(VllmWorker TP0 pid=42)",
            "(EngineCore_DP0 pid=42)",
        ] {
            assert_eq!(normalise(&format!("{tag} {ERR}")), ERR, "{tag}");
        }
        assert_eq!(normalise(&format!("[pod/trainer-0/main] {ERR}")), ERR);
    }

    #[test]
    fn text_without_prefixes_is_kept() {
        for line in [
            ERR,
            "  File \"/usr/lib/python3/site-packages/torch/nn/modules/module.py\", line 1501, in _call_impl",
            "| col | col |",
            "RuntimeError: shape '[2, 3]' is invalid for input of size 7",
        ] {
            assert_eq!(normalise(line), line.trim_end());
        }
    }

    /// [`strip_prefixes`] without the byte tests that spare most lines the
    /// regexes.
    fn strip_prefixes_by_regex_alone(line: &str) -> &str {
        let mut rest = line;
        loop {
            match prefix().find(rest) {
                Some(m) if !m.is_empty() => rest = &rest[m.end()..],
                _ => break,
            }
        }
        match progress_bar().find(rest) {
            Some(m) => &rest[m.end()..],
            None => rest,
        }
    }

    /// Every line of every fixture log, as `strip_prefixes` receives it.
    fn fixture_lines() -> Vec<String> {
        crate::fixture_log_lines()
            .iter()
            .map(|raw| strip_ansi(after_carriage_returns(raw)).into_owned())
            .collect()
    }

    #[test]
    fn the_byte_tests_never_skip_a_prefix_the_regexes_remove() {
        let prefixes = [
            "2024-05-01T12:00:00Z ",
            "2024-05-01T12:00:00.123456789Z stderr F ",
            "[2024-05-01 12:00:00] ",
            "  2024-05-01 12:00:00,123 - ",
            "\t[2024-05-01 12:00:00] ",
            // `\d` and `\s` are Unicode: Arabic-Indic digits, wide spaces.
            "\u{662}\u{660}\u{662}\u{664}-\u{660}\u{665}-\u{660}\u{661}T12:00:00Z ",
            "\u{2003}2024-05-01 12:00:00 ",
            "\u{3000}[2024-05-01 12:00:00] ",
            "2024-05-01t12:00:00.5z ",
            "2024-05-01T12:00Z\t",
            "2024-05-01T12:00:00+0200 gpu-node python3[4242]: ",
            "2024-05-01T12:00:00.123456+0200 gpu-node kernel:\t",
            "May  1 12:00:00 gpu-node kernel: ",
            "Dec 12 03:04:05 host python3[4242]: ",
            "[rank0]: ",
            "[default3]:",
            "[1,0]<stderr>:",
            "(VllmWorkerProcess pid=1234) ",
            "(RayWorkerWrapper pid=77, ip=10.0.0.2) ",
            "W1019 19:13:49.873734 140551252768576 submission_runner.py:350] ",
            "I\u{661}\u{660}\u{661}\u{669} 19:13:49.873734 1405 file.py:350] ",
            "[W914 04:53:45.615225908 ProcessGroupNCCL.cpp:1476] ",
            "INFO 05-01 12:00:00 llm_engine.py:123] ",
            "WARNING 05-01 12:00:00 llm_engine.py:123] ",
            "CRITICAL 05-01 12:00:00.5 [core.py:586] ",
            "DEBUG 05-01 12:00:00 a/b.py:1] ",
            "[pod/trainer-0/main] ",
            "vllm-server-1  | ",
            "web_1 | 2024-05-01T12:00:00Z [rank0]: ",
            "a.b-c |",
            "Loading checkpoint shards:  50%|#####     | 1/2 [00:03<00:03,  3.41s/it]",
            "100%|##########| 10/10 [00:02<00:00,  4.2it/s] ",
        ];
        let bodies = [
            "torch.OutOfMemoryError: CUDA out of memory.",
            "",
            "  File \"x.py\", line 3, in <module>",
            "| col | col |",
        ];
        let mut lines = fixture_lines();
        for prefix in prefixes {
            for body in bodies {
                lines.push(format!("{prefix}{body}"));
            }
        }
        let mut stripped = 0;
        for line in &lines {
            let expected = strip_prefixes_by_regex_alone(line);
            assert_eq!(strip_prefixes(line), expected, "{line:?}");
            if expected.len() < line.len() {
                stripped += 1;
            }
        }
        // Every crafted line loses its prefix; some fixture lines do too.
        assert!(
            stripped > prefixes.len() * bodies.len(),
            "{stripped} lines stripped"
        );
    }

    #[test]
    fn a_line_with_nothing_to_remove_is_not_copied() {
        use std::borrow::Cow;
        assert!(matches!(
            normalised(&format!("{ERR}  ")),
            Cow::Borrowed(ERR)
        ));
        assert!(matches!(
            normalised(&format!("[rank0]: {ERR}\r")),
            Cow::Borrowed(ERR)
        ));
        let coloured = format!("\x1b[31m{ERR}\x1b[0m");
        assert!(matches!(normalised(&coloured), Cow::Owned(ref s) if s == ERR));
        // Either way it is what `normalise` gives.
        for line in fixture_lines() {
            assert_eq!(normalised(&line), normalise(&line));
        }
    }
}
