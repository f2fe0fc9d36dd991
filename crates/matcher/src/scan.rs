//! Streaming: lines are cut from chunks of bytes as they come, each line is
//! normalised and matched, and each page keeps at most one pattern hit and
//! one fuzzy hit. Memory is bounded by the number of pages and [`MAX_LINE`].

use crate::{Captures, Kind, MAX_TEXT, Match, Matcher, fuzzy, normalise};

/// Longest line considered, in bytes; the rest of a longer line is ignored.
pub const MAX_LINE: usize = 64 * 1024;

/// How many lines after a marker it still describes (see [`Context`]).
pub const CONTEXT_LINES: u64 = 40;

/// Where a line sits relative to markers in the log, best first.
///
/// - `RootCause`: within [`CONTEXT_LINES`] after a line that names the root
///   cause (`Root Cause (first observed failure):` from torchelastic).
/// - `Neutral`: anywhere else.
/// - `Consequence`: within [`CONTEXT_LINES`] after a line that announces a
///   later, secondary error: `During handling of the above exception,
///   another exception occurred`, `The above exception was the direct cause
///   of the following exception`, `Exception ignored in`, `Error in atexit`,
///   or a shutdown.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord)]
pub enum Context {
    /// Named as the root cause.
    RootCause,
    /// No marker.
    #[default]
    Neutral,
    /// Announced as a consequence of an earlier error.
    Consequence,
}

const ROOT_MARKERS: &[&str] = &["Root Cause (first observed failure)"];
const CONSEQUENCE_MARKERS: &[&str] = &[
    "During handling of the above exception, another exception occurred",
    "The above exception was the direct cause of the following exception",
    "Exception ignored in",
    "Error in atexit",
    "while shutting down",
    "during shutdown",
    "Shutting down",
];

/// Every marker, root-cause ones first: the prefilter finds them in the
/// pass that finds the candidate patterns.
pub(crate) fn markers() -> Vec<&'static str> {
    ROOT_MARKERS
        .iter()
        .chain(CONSEQUENCE_MARKERS)
        .copied()
        .collect()
}

/// The context a line's markers (bit `k` for marker `k` of [`markers`])
/// start, if any: a root-cause marker wins.
fn marker(found: u64) -> Option<Context> {
    if found & ((1 << ROOT_MARKERS.len()) - 1) != 0 {
        Some(Context::RootCause)
    } else {
        (found != 0).then_some(Context::Consequence)
    }
}

#[derive(Debug, Clone)]
struct Hit {
    input: usize,
    line: u64,
    text: String,
    captures: Captures,
    context: Context,
    score: f64,
}

/// The state of one log being matched: see [`Matcher::scan`].
#[derive(Debug)]
pub struct Scan {
    buf: Vec<u8>,
    pending_cr: bool,
    input: usize,
    line: u64,
    context: Context,
    context_until: u64,
    any_pattern: bool,
    hits: Vec<Option<Hit>>,
    fuzzy: Vec<Option<Hit>>,
    scratch: Vec<u32>,
    /// The patterns that may match the current line (reused).
    candidates: Vec<u32>,
}

fn truncated(text: &str) -> String {
    if text.len() <= MAX_TEXT {
        return text.to_string();
    }
    let mut end = MAX_TEXT;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text[..end].to_string()
}

impl Matcher {
    /// Starts matching a log.
    pub fn scan(&self) -> Scan {
        let pages = self.pages.len();
        Scan {
            buf: Vec::new(),
            pending_cr: false,
            input: 0,
            line: 0,
            context: Context::Neutral,
            context_until: 0,
            any_pattern: false,
            hits: vec![None; pages],
            fuzzy: vec![None; pages],
            scratch: vec![0; pages],
            candidates: Vec::new(),
        }
    }

    /// Feeds the next chunk of the log; chunks may split lines, and
    /// multi-byte characters, anywhere. Bytes that are not UTF-8 are read
    /// as U+FFFD.
    pub fn feed(&self, scan: &mut Scan, bytes: &[u8]) {
        // One search for line ends over the whole chunk.
        let mut start = 0;
        for end in memchr::memchr2_iter(b'\n', b'\r', bytes) {
            text(scan, &bytes[start..end]);
            if bytes[end] == b'\n' {
                self.end_line(scan);
                scan.pending_cr = false;
            } else {
                scan.pending_cr = true;
            }
            start = end + 1;
        }
        text(scan, &bytes[start..]);
    }

    /// Ends the current input; the next bytes fed are another log, whose
    /// lines are numbered from 1 again.
    pub fn next_input(&self, scan: &mut Scan) {
        if !scan.buf.is_empty() {
            self.end_line(scan);
        }
        scan.pending_cr = false;
        scan.input += 1;
        scan.line = 0;
        scan.context = Context::Neutral;
        scan.context_until = 0;
    }

    /// The pages that matched, ranked (see [`rank`]).
    pub fn finish(&self, mut scan: Scan) -> Vec<Match> {
        if !scan.buf.is_empty() {
            self.end_line(&mut scan);
        }
        let (hits, kind) = if scan.any_pattern {
            (scan.hits, Kind::Pattern)
        } else {
            (scan.fuzzy, Kind::Fuzzy)
        };
        let mut matches: Vec<Match> = hits
            .into_iter()
            .enumerate()
            .filter_map(|(page, hit)| {
                let hit = hit?;
                let p = &self.pages[page];
                Some(Match {
                    url: p.url.clone(),
                    title: p.title.clone(),
                    signature: p.signature.clone(),
                    source: p.source.clone(),
                    line: hit.line,
                    text: hit.text,
                    captures: hit.captures,
                    kind,
                    score: hit.score,
                    log: None,
                    input: hit.input,
                    priority: p.priority,
                    context: hit.context,
                })
            })
            .collect();
        rank(&mut matches);
        matches
    }

    fn end_line(&self, scan: &mut Scan) {
        scan.line += 1;
        // The line is read in place (the buffer is lent out and returned):
        // valid UTF-8 without ANSI escapes is never copied.
        let mut buf = std::mem::take(&mut scan.buf);
        // Checking UTF-8 (word by word) costs less than reading it lossily
        // (character by character), and most lines are valid.
        let raw = match std::str::from_utf8(&buf) {
            Ok(valid) => std::borrow::Cow::Borrowed(valid),
            Err(_) => String::from_utf8_lossy(&buf),
        };
        self.match_line(scan, &normalise::normalised(&raw));
        buf.clear();
        scan.buf = buf;
    }

    /// Steps 2 and 3 for one normalised line.
    fn match_line(&self, scan: &mut Scan, text: &str) {
        if text.is_empty() {
            if scan.line > scan.context_until {
                scan.context = Context::Neutral;
            }
            return;
        }
        let mut candidates = std::mem::take(&mut scan.candidates);
        let seen = self.prefilter.find(text, &mut candidates);
        if let Some(context) = marker(seen.markers) {
            scan.context = context;
            scan.context_until = scan.line + CONTEXT_LINES;
        } else if scan.line > scan.context_until {
            scan.context = Context::Neutral;
        }
        for &index in &candidates {
            let index = index as usize;
            let page = self.owner[index];
            if scan.hits[page]
                .as_ref()
                .is_some_and(|hit| hit.context <= scan.context)
            {
                continue;
            }
            let Some(regex) = self.regex(index) else {
                continue;
            };
            let Some(found) = regex.captures(text) else {
                continue;
            };
            let mut captures = Captures::default();
            for name in regex.capture_names().flatten() {
                if let Some(m) = found.name(name) {
                    captures.0.push((name.to_string(), m.as_str().to_string()));
                }
            }
            scan.any_pattern = true;
            scan.hits[page] = Some(Hit {
                input: scan.input,
                line: scan.line,
                text: truncated(text),
                captures,
                context: scan.context,
                score: 1.0,
            });
        }
        scan.candidates = candidates;
        if !scan.any_pattern && fuzzy::looks_like_error_given(text, seen.word) {
            for (page, score) in self.signatures.similar(text, &mut scan.scratch) {
                let better = scan.fuzzy[page].as_ref().is_none_or(|hit| {
                    score > hit.score || (score == hit.score && scan.context < hit.context)
                });
                if better {
                    scan.fuzzy[page] = Some(Hit {
                        input: scan.input,
                        line: scan.line,
                        text: truncated(text),
                        captures: Captures::default(),
                        context: scan.context,
                        score,
                    });
                }
            }
        }
    }
}

/// Text between line ends. After a carriage return, more text (not a
/// line feed, nor another carriage return) redraws the line: a terminal
/// shows only what comes after.
fn text(scan: &mut Scan, bytes: &[u8]) {
    if bytes.is_empty() {
        return;
    }
    if scan.pending_cr {
        scan.buf.clear();
        scan.pending_cr = false;
    }
    let room = MAX_LINE.saturating_sub(scan.buf.len());
    scan.buf.extend_from_slice(&bytes[..bytes.len().min(room)]);
}

/// Ranks matches, best first:
///
/// 1. higher `priority` (front matter; default 0);
/// 2. root-cause context: a line named as the root cause, then a neutral
///    line, then a line announced as a consequence (see [`Context`]);
/// 3. for fuzzy matches, higher similarity;
/// 4. log order: the earlier input, then the earlier line;
/// 5. the URL, so that the order is total.
pub fn rank(matches: &mut [Match]) {
    matches.sort_by(|a, b| {
        b.priority
            .cmp(&a.priority)
            .then(a.context.cmp(&b.context))
            .then(b.score.total_cmp(&a.score))
            .then(a.input.cmp(&b.input))
            .then(a.line.cmp(&b.line))
            .then_with(|| a.url.cmp(&b.url))
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Index, Page};

    fn page(url: &str, signature: &str, patterns: &[&str], priority: i32) -> Page {
        Page {
            url: url.into(),
            title: format!("Fix {signature}"),
            signature: signature.into(),
            source: format!("content{url}.md"),
            patterns: patterns.iter().map(|p| p.to_string()).collect(),
            priority,
        }
    }

    fn matcher(pages: Vec<Page>) -> Matcher {
        Matcher::new(Index { version: 1, pages }).unwrap()
    }

    fn site() -> Matcher {
        matcher(vec![
            page(
                "/oom",
                "RuntimeError: CUDA out of memory. Tried to allocate ... MiB",
                &[r"CUDA out of memory\. Tried to allocate (?P<requested>[\d.]+ [KMG]iB)"],
                0,
            ),
            page(
                "/illegal",
                "RuntimeError: CUDA error: an illegal memory access was encountered",
                &[r"CUDA error: an illegal memory access was encountered"],
                0,
            ),
            page(
                "/nccl",
                "torch.distributed.DistBackendError: NCCL error",
                &[
                    r"DistBackendError: NCCL error",
                    r"NCCL communicator was aborted",
                ],
                0,
            ),
            page(
                "/childfailed",
                "torch.distributed.elastic.multiprocessing.errors.ChildFailedError",
                &[r"ChildFailedError"],
                -10,
            ),
        ])
    }

    fn urls(matches: &[Match]) -> Vec<&str> {
        matches.iter().map(|m| m.url.as_str()).collect()
    }

    #[test]
    fn records_line_number_text_and_named_captures() {
        let log = b"starting\n\x1b[31m[rank0]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0\x1b[0m\r\nbye\n";
        let found = site().match_bytes(log);
        assert_eq!(urls(&found), ["/oom"]);
        assert_eq!(found[0].line, 2);
        assert_eq!(
            found[0].text,
            "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0"
        );
        assert_eq!(found[0].captures.get("requested"), Some("20.00 MiB"));
        assert_eq!(found[0].kind, Kind::Pattern);
    }

    #[test]
    fn chunks_may_split_lines_anywhere() {
        let log = "a\r\nprogress 10%\rprogress 100%\rRuntimeError: CUDA error: an illegal memory access was encountered\r\n\
                   ¿ünïcode? CUDA out of memory. Tried to allocate 2.00 GiB\n";
        let whole = site().match_bytes(log.as_bytes());
        for size in [1, 2, 3, 7, 64] {
            let m = site();
            let mut scan = m.scan();
            for chunk in log.as_bytes().chunks(size) {
                m.feed(&mut scan, chunk);
            }
            assert_eq!(m.finish(scan), whole, "chunks of {size}");
        }
        assert_eq!(urls(&whole), ["/illegal", "/oom"]);
        assert_eq!(whole[0].line, 2);
    }

    #[test]
    fn rank_is_priority_then_context_then_log_order() {
        // A CUDA error, the traceback it caused, a wrapper's summary printed
        // first, and a shutdown error.
        let log = "\
torch.distributed.elastic.multiprocessing.errors.ChildFailedError:
RuntimeError: CUDA error: an illegal memory access was encountered
Traceback (most recent call last):
During handling of the above exception, another exception occurred:
torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1970
";
        let found = site().match_bytes(log.as_bytes());
        // ChildFailedError comes first in the log but has priority -10; the
        // NCCL error follows a consequence marker.
        assert_eq!(urls(&found), ["/illegal", "/nccl", "/childfailed"]);

        // With equal priority and context, log order decides.
        let log =
            "NCCL communicator was aborted\nCUDA error: an illegal memory access was encountered\n";
        assert_eq!(
            urls(&site().match_bytes(log.as_bytes())),
            ["/nccl", "/illegal"]
        );

        // A line torchelastic names as the root cause outranks earlier ones.
        let log = "NCCL communicator was aborted\nRoot Cause (first observed failure):\n  error: CUDA error: an illegal memory access was encountered\n";
        assert_eq!(
            urls(&site().match_bytes(log.as_bytes())),
            ["/illegal", "/nccl"]
        );

        // The marker's reach ends after CONTEXT_LINES lines.
        let mut log = String::from("Exception ignored in: <function X.__del__>\n");
        log.push_str(&"filler\n".repeat(CONTEXT_LINES as usize));
        log.push_str(
            "NCCL communicator was aborted\nCUDA error: an illegal memory access was encountered\n",
        );
        assert_eq!(
            urls(&site().match_bytes(log.as_bytes())),
            ["/nccl", "/illegal"]
        );
    }

    #[test]
    fn a_page_keeps_its_first_hit_unless_a_later_one_is_in_better_context() {
        let log = "Shutting down\nNCCL communicator was aborted\n".to_string()
            + &"x\n".repeat(50)
            + "NCCL communicator was aborted\nNCCL communicator was aborted\n";
        let found = site().match_bytes(log.as_bytes());
        assert_eq!(found[0].line, 53);
        assert_eq!(found[0].context, Context::Neutral);
    }

    #[test]
    fn fuzzy_only_when_no_pattern_matched() {
        let log = b"Traceback (most recent call last):\nRuntimeError: CUDA out of memory. Tried to allocate more than 1.00 GiB (GPU 0; 7.79 GiB total)\n";
        let found = site().match_bytes(log);
        assert_eq!(urls(&found), ["/oom"]);
        assert_eq!(found[0].kind, Kind::Fuzzy);
        assert!(found[0].score >= crate::FUZZY_THRESHOLD && found[0].score < 1.0);
        assert!(found[0].captures.is_empty());
        // A pattern hit anywhere turns fuzzy matching off.
        let log = b"RuntimeError: CUDA out of memory. Tried to allocate more than 1.00 GiB\nNCCL communicator was aborted\n";
        let found = site().match_bytes(log);
        assert_eq!(urls(&found), ["/nccl"]);
    }

    #[test]
    fn logs_without_known_errors_match_nothing() {
        let log = "INFO 05-01 12:00:00 llm_engine.py:123] Initializing an LLM engine\n\
                   ValueError: invalid literal for int() with base 10: 'abc'\n\
                   Segmentation fault (core dumped)\n";
        assert!(site().match_bytes(log.as_bytes()).is_empty());
        assert!(site().match_bytes(b"").is_empty());
    }

    #[test]
    fn binary_input_never_panics_and_lines_are_bounded() {
        let mut log: Vec<u8> = (0..=255u8).cycle().take(300_000).collect();
        log.extend_from_slice(b"\nCUDA out of memory. Tried to allocate 1.00 GiB\n");
        let found = site().match_bytes(&log);
        assert_eq!(urls(&found), ["/oom"]);
        // A line longer than MAX_LINE is cut, never kept whole.
        let m = site();
        let mut scan = m.scan();
        for _ in 0..100 {
            m.feed(&mut scan, &[b'x'; 10_000]);
        }
        assert!(scan.buf.len() <= MAX_LINE);
    }

    #[test]
    fn bad_patterns_are_all_reported() {
        let errors = Matcher::new(Index {
            version: 1,
            pages: vec![page("/a", "a b c", &["(", "ok", "[z-a]"], 0)],
        })
        .unwrap_err();
        assert_eq!(errors.len(), 2);
        assert!(errors[0].message.contains("unclosed group"), "{errors:?}");
    }

    #[test]
    fn inputs_are_numbered_separately() {
        let m = site();
        let mut scan = m.scan();
        m.feed(&mut scan, b"one\ntwo\nNCCL communicator was aborted");
        m.next_input(&mut scan);
        m.feed(
            &mut scan,
            b"CUDA error: an illegal memory access was encountered\n",
        );
        let found = m.finish(scan);
        assert_eq!(urls(&found), ["/nccl", "/illegal"]);
        assert_eq!((found[0].input, found[0].line), (0, 3));
        assert_eq!((found[1].input, found[1].line), (1, 1));
    }

    #[test]
    fn lines_read_in_place_and_lines_copied_match_alike() {
        const OOM: &str = "CUDA out of memory. Tried to allocate 1.00 GiB";
        // Valid UTF-8 with nothing to remove is read in place; colours, a
        // CRLF, bytes that are not UTF-8 and prefixes are not.
        let replaced = format!("\u{FFFD}\u{FFFD} {OOM}");
        for (raw, text) in [
            (format!("{OOM}\n").into_bytes(), OOM),
            (format!("\x1b[31m{OOM}\x1b[0m\r\n").into_bytes(), OOM),
            (
                [&b"\xff\xfe "[..], OOM.as_bytes()].concat(),
                replaced.as_str(),
            ),
            (
                format!("2024-05-01T12:00:00Z [rank0]: {OOM}  \r\n").into_bytes(),
                OOM,
            ),
        ] {
            let found = site().match_bytes(&raw);
            assert_eq!(urls(&found), ["/oom"], "{raw:?}");
            assert_eq!(found[0].text, text);
            assert_eq!(found[0].captures.get("requested"), Some("1.00 GiB"));
        }
        // One after the other: the line buffer is lent out and returned.
        let log = b"\x1b[1mShutting down\x1b[0m\r\nx\xff\nNCCL communicator was aborted\n\
                    CUDA error: an illegal memory access was encountered\n";
        let found = site().match_bytes(log);
        assert_eq!(urls(&found), ["/nccl", "/illegal"]);
        assert_eq!((found[0].line, found[1].line), (3, 4));
        // The coloured marker was found.
        assert_eq!(found[0].context, Context::Consequence);
    }
}
