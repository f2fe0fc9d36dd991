//! Step 1: turn one raw log line into the text a pattern should see.
//!
//! - carriage returns: a terminal shows only what was written after the last
//!   `\r` (tqdm and other progress bars redraw a line that way), and a
//!   trailing `\r` is the rest of a CRLF line ending;
//! - ANSI escape sequences (colours, cursor movement, OSC titles) are removed;
//! - line prefixes that log collectors and launchers add are removed, again
//!   and again while one is found (`web-1  | 2024-05-01T12:00:00Z [rank0]: ...`):
//!   ISO 8601 and RFC 3339 timestamps (GitHub Actions, `kubectl logs
//!   --timestamps`, the CRI log format `... stdout F`, Python's `logging`),
//!   syslog (`May  1 12:00:00 host kernel: `), glog (`W1019 19:13:49.873734
//!   1405 file.py:350] `, PyTorch's C++ warnings), `[rank0]:` and `[default0]:`
//!   (torch.distributed), `[1,0]<stderr>:` (mpirun), vLLM's logger
//!   (`INFO 05-01 12:00:00 file.py:123] ` and `... [file.py:123] `), vLLM and
//!   Ray worker tags (`(VllmWorkerProcess pid=123) `), `kubectl logs
//!   --prefix` (`[pod/name/container] `) and Docker Compose
//!   (`container-name  | `);
//! - a tqdm progress bar left in front of the text is removed.

use std::sync::OnceLock;

use regex::Regex;

/// One line prefix, anchored at the start; see the module documentation.
fn prefix() -> &'static Regex {
    static PREFIX: OnceLock<Regex> = OnceLock::new();
    PREFIX.get_or_init(|| {
        Regex::new(
            r"(?x)^(?:
              # ISO 8601 / RFC 3339, bracketed or not, with the CRI stream tag
              \s*\[?\d{4}-\d{2}-\d{2}[T\ ]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:\ ?(?:Z|UTC|[+-]\d{2}:?\d{2}))?\]?
                (?:\ (?:stdout|stderr)\ [FP])?(?:\ ?[|:-])?\ +
            | # syslog and journald's short format
              [A-Z][a-z]{2}\ [\ \d]\d\ \d{2}:\d{2}:\d{2}\ \S+\ [^:\s]+:\ +
            | # torch.distributed ranks and torchrun's --tee
              \[(?:rank|default)\d+\]:\ ?
            | # mpirun --tag-output
              \[\d+,\d+\]<std(?:out|err)>:\ ?
            | # vLLM and Ray worker tags
              \([\w.-]+(?:\ rank=\d+)?\ pid=\d+(?:,\ ip=[\d.]+)?\)\ +
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

/// How many prefixes are removed from one line at most.
const MAX_PREFIXES: usize = 6;

/// The text a terminal would show for `raw` after its last carriage return.
pub fn after_carriage_returns(raw: &str) -> &str {
    let line = raw.trim_end_matches('\r');
    line.rfind('\r').map_or(line, |i| &line[i + 1..])
}

/// Removes ANSI escape sequences: CSI (`ESC [ ... final`), OSC (`ESC ] ...
/// BEL` or `ESC ] ... ESC \`) and two-byte escapes.
pub fn strip_ansi(line: &str) -> std::borrow::Cow<'_, str> {
    if !line.contains('\x1b') {
        return std::borrow::Cow::Borrowed(line);
    }
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\x1b' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('[') => {
                // Parameters and intermediates, then one final byte in @..~.
                for c in chars.by_ref() {
                    if ('@'..='~').contains(&c) {
                        break;
                    }
                }
            }
            Some(']') => {
                while let Some(c) = chars.next() {
                    if c == '\x07' {
                        break;
                    }
                    if c == '\x1b' && chars.peek() == Some(&'\\') {
                        chars.next();
                        break;
                    }
                }
            }
            _ => {}
        }
    }
    std::borrow::Cow::Owned(out)
}

/// Removes the launcher and collector prefixes, and a leading progress bar.
pub fn strip_prefixes(line: &str) -> &str {
    let mut rest = line;
    for _ in 0..MAX_PREFIXES {
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

/// The whole of step 1 for one line (without its `\n`).
pub fn normalise(raw: &str) -> String {
    let shown = after_carriage_returns(raw);
    let plain = strip_ansi(shown);
    strip_prefixes(&plain).trim_end().to_string()
}

#[cfg(test)]
mod tests {
    use super::normalise;

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
        ] {
            assert_eq!(normalise(&format!("{prefix}{ERR}")), ERR, "{prefix:?}");
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
}
