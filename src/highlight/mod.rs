//! Build-time syntax highlighting. The only module that knows syntect.
//!
//! Tokens get short class names for a small set of kinds (Pygments style:
//! `k`, `s`, `c`, ...), adjacent tokens of the same kind are merged, and the
//! colours come from a generated stylesheet with a light and a dark theme.
//! Identical blocks are highlighted once while they recur ([`Highlighter`]
//! caches them in bounded [`Generations`]), and each line is parsed once
//! per thread for a given parser state (the line memo: syntect's
//! `ParseState` is deterministic, so the state at a line's start plus the
//! line's text is an exact key for the scope operations it yields and the
//! state after it).

mod generations;

use std::cell::RefCell;
use std::fmt::Write as _;
use std::hash::{BuildHasher, RandomState};
use std::sync::{Arc, LazyLock, Mutex};

use syntect::highlighting::{Color, FontStyle, Highlighter as ThemeHighlighter, Theme};
use syntect::parsing::{ParseState, Scope, ScopeStack, ScopeStackOp, SyntaxReference, SyntaxSet};
use syntect::util::LinesWithEndings;

use generations::Generations;

static SYNTAXES: LazyLock<SyntaxSet> = LazyLock::new(two_face::syntax::extra_newlines);

/// Token kinds and the scope prefixes that select them, most specific first.
const KINDS: &[(&str, &str)] = &[
    ("comment", "c"),
    ("punctuation.definition.comment", "c"),
    ("string.regexp", "sr"),
    ("constant.character.escape", "se"),
    ("string", "s"),
    ("constant.numeric", "m"),
    ("constant.language", "kc"),
    ("constant.other.option", "na"),
    ("constant", "no"),
    ("keyword.operator", "o"),
    ("keyword", "k"),
    ("storage.type", "kt"),
    ("storage", "k"),
    ("entity.name.function", "nf"),
    ("variable.function", "nf"),
    ("support.function", "nb"),
    ("entity.name.type", "nc"),
    ("entity.name.class", "nc"),
    ("support.type", "kt"),
    ("support.class", "nc"),
    ("entity.name.tag", "nt"),
    ("entity.other.attribute-name", "na"),
    ("meta.mapping.key", "na"),
    ("variable.parameter", "nv"),
    ("variable.other", "nv"),
    ("punctuation.definition.variable", "nv"),
    ("variable.language", "bp"),
    ("entity.name.section", "gh"),
    ("markup.heading", "gh"),
    ("invalid", "err"),
];

/// Representative scopes for the stylesheet: each kind is coloured as the
/// theme colours this scope.
const STYLE_SCOPES: &[(&str, &str)] = &[
    ("c", "comment"),
    ("sr", "string.regexp"),
    ("se", "constant.character.escape"),
    ("s", "string.quoted"),
    ("m", "constant.numeric"),
    ("kc", "constant.language"),
    ("no", "constant.other"),
    ("o", "keyword.operator"),
    ("k", "keyword.control"),
    ("kt", "storage.type"),
    ("nf", "entity.name.function"),
    ("nb", "support.function"),
    ("nc", "entity.name.type"),
    ("nt", "entity.name.tag"),
    ("na", "entity.other.attribute-name"),
    ("nv", "variable.parameter"),
    ("bp", "variable.language"),
    ("gh", "markup.heading"),
    ("err", "invalid"),
];

static KIND_SCOPES: LazyLock<Vec<(Scope, &'static str)>> = LazyLock::new(|| {
    KINDS
        .iter()
        .map(|(prefix, kind)| (Scope::new(prefix).expect("valid scope"), *kind))
        .collect()
});

/// Languages rendered as plain, escaped text without a warning.
const PLAIN: &[&str] = &["", "text", "txt", "plain", "plaintext", "log", "output"];

/// Fence names that syntect does not know by token, mapped to ones it does.
fn alias(lang: &str) -> &str {
    match lang {
        "sh" | "shell" | "zsh" | "console" | "shell-session" | "bash" => "bash",
        "py" | "python3" => "python",
        "yml" => "yaml",
        "ps1" | "pwsh" | "powershell" => "PowerShell",
        "docker" | "dockerfile" | "Dockerfile" => "Dockerfile",
        "c++" | "cxx" | "hpp" => "cpp",
        "conf" | "cfg" => "ini",
        "rs" => "rust",
        other => other,
    }
}

/// The result of highlighting one block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Highlighted {
    /// The `<pre>` element.
    pub html: Arc<str>,
    /// False when the language was not recognised (rendered as plain text).
    pub known_language: bool,
}

/// Highlights code blocks, once per distinct `(language, code)` while it
/// recurs: the cache is bounded ([`BLOCK_BUDGET`]), so that it does not
/// hold every block of a large site (on 100,000 pages that was about a
/// gigabyte).
///
/// The cache is split into shards so that parallel renderers rarely wait
/// on each other.
pub struct Highlighter {
    shards: Vec<Mutex<Generations<(String, String), Highlighted>>>,
    hasher: RandomState,
    /// Escape instead of highlighting (for `errata check`, whose output is
    /// thrown away), still recognising languages.
    plain: bool,
}

/// Bytes of code and HTML the block cache's newer generation holds, over
/// all shards (the older generation holds as much again).
const BLOCK_BUDGET: usize = 16 << 20;
const SHARDS: usize = 32;

impl Default for Highlighter {
    fn default() -> Self {
        Highlighter {
            shards: (0..SHARDS)
                .map(|_| Mutex::new(Generations::new(BLOCK_BUDGET / SHARDS)))
                .collect(),
            hasher: RandomState::new(),
            plain: false,
        }
    }
}

impl Highlighter {
    /// A highlighter that only escapes code and recognises languages.
    pub fn plain() -> Self {
        Highlighter {
            plain: true,
            ..Highlighter::default()
        }
    }

    /// Highlights `code` written in fence language `lang`.
    pub fn highlight(&self, lang: &str, code: &str) -> Highlighted {
        if self.plain {
            let lower = lang.to_ascii_lowercase();
            let known = matches!(lower.as_str(), "console" | "shell-session")
                || PLAIN.contains(&lower.as_str())
                || find_syntax(&lower, lang).is_some();
            let mut html = String::from("<pre class=\"code\"><code>");
            crate::escape::html_into(code, &mut html);
            html.push_str("</code></pre>");
            return Highlighted {
                html: html.into(),
                known_language: known,
            };
        }
        let key = (lang.to_string(), code.to_string());
        let shard = &self.shards[(self.hasher.hash_one(&key) % self.shards.len() as u64) as usize];
        let cost = |html: &Highlighted| lang.len() + code.len() + html.html.len();
        if let Some(hit) = shard
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .renew(&key, cost)
        {
            return hit.clone();
        }
        let result = highlight_uncached(lang, code);
        shard
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .charge(key, cost(&result), || result.clone());
        result
    }
}

/// Makes sure the syntax tables are loaded (for timing them on their own).
pub fn warm_up() {
    LazyLock::force(&SYNTAXES);
    LazyLock::force(&KIND_SCOPES);
}

fn highlight_uncached(lang: &str, code: &str) -> Highlighted {
    let code = code.replace("\r\n", "\n");
    let lang_lower = lang.to_ascii_lowercase();
    let mut html = String::with_capacity(code.len() * 2);
    let data_lang = crate::escape::xml(if lang_lower.is_empty() {
        "text"
    } else {
        &lang_lower
    });
    let _ = write!(html, "<pre class=\"code\" data-lang=\"{data_lang}\"><code>");
    let mut known_language = true;
    if lang_lower == "console" || lang_lower == "shell-session" {
        console(&code, &mut html);
    } else if PLAIN.contains(&lang_lower.as_str()) {
        crate::escape::html_into(&code, &mut html);
    } else if let Some(syntax) = find_syntax(&lang_lower, lang) {
        tokens(syntax, &code, &mut html);
    } else {
        known_language = false;
        crate::escape::html_into(&code, &mut html);
    }
    html.push_str("</code></pre>");
    Highlighted {
        html: html.into(),
        known_language,
    }
}

fn find_syntax(lower: &str, original: &str) -> Option<&'static SyntaxReference> {
    let name = alias(lower);
    SYNTAXES
        .find_syntax_by_token(name)
        .or_else(|| SYNTAXES.find_syntax_by_name(name))
        .or_else(|| SYNTAXES.find_syntax_by_token(original))
}

/// The scope operations of one line, at their byte offsets.
type Ops = Arc<[(usize, ScopeStackOp)]>;

/// What parsing one line from one parser state gives: its operations and
/// the state after the line.
type Parsed = (Ops, ParseState);

/// The per-thread line memo (see the module docs). Per thread, so that the
/// hot path takes no lock; bounded, so that a huge site cannot grow it
/// without end. It keeps two generations: when the newer is full, the
/// older is dropped and the newer takes its place, so lines that recur
/// across the site stay while one-off lines age out.
type LineMemo = Generations<Box<str>, Vec<(ParseState, Parsed)>>;

/// Entries per generation and thread (each holds two parser states, about
/// 1 KB). On the benchmark's corpus where no line repeats, the memo is
/// always full: at 200,000 in one generation it peaked at 1.17 GiB on
/// 10,000 pages, at 40,000 at 501 MiB (on 100,000 pages, by its growth
/// from 10,000 to 20,000, about 1.0 GB: at the goal's limit), at 20,000 at
/// 330 MiB (944 MiB measured on 100,000).
/// Where lines recur, 20,000 costs about 2% more CPU than 40,000.
const MEMO_LIMIT: usize = 20_000;
/// States remembered per line text; more are parsed afresh.
const STATES_PER_LINE: usize = 8;

thread_local! {
    static MEMO: RefCell<LineMemo> = RefCell::new(Generations::new(MEMO_LIMIT));
}

/// Whether the line memo is on. `ERRATA_HIGHLIGHT_MEMO=off` turns it off, to
/// prove that it changes nothing (the benchmark compares both outputs).
static MEMO_ON: LazyLock<bool> =
    LazyLock::new(|| std::env::var("ERRATA_HIGHLIGHT_MEMO").map_or(true, |v| v != "off"));

/// Parses one line from `state` (left at the state after the line),
/// through the memo when `memo` is set. States are cloned only to be
/// remembered: once on a hit, twice on a miss that is stored.
fn parse_line(state: &mut ParseState, line: &str, memo: bool) -> Result<Ops, ()> {
    if !memo {
        return Ok(state.parse_line(line, &SYNTAXES).map_err(|_| ())?.into());
    }
    let (hit, room) = MEMO.with_borrow(|m| match m.get(line) {
        Some(states) => match states.iter().find(|(before, _)| before == &*state) {
            Some((_, (ops, after))) => {
                state.clone_from(after);
                (Some(ops.clone()), false)
            }
            None => (None, states.len() < STATES_PER_LINE),
        },
        None => (None, true),
    });
    if let Some(ops) = hit {
        return Ok(ops);
    }
    let before = room.then(|| state.clone());
    let ops: Ops = state.parse_line(line, &SYNTAXES).map_err(|_| ())?.into();
    if let Some(before) = before {
        MEMO.with_borrow_mut(|m| {
            let states = m.charge(line.into(), 1, Vec::new);
            if states.len() < STATES_PER_LINE {
                states.push((before, (ops.clone(), state.clone())));
            }
        });
    }
    Ok(ops)
}

/// Writes `code` as spans of token kinds, merging neighbours of one kind.
fn tokens(syntax: &SyntaxReference, code: &str, out: &mut String) {
    tokens_with(syntax, code, out, *MEMO_ON);
}

fn tokens_with(syntax: &SyntaxReference, code: &str, out: &mut String, memo: bool) {
    let mut state = ParseState::new(syntax);
    let mut stack = ScopeStack::new();
    let mut writer = SpanWriter::new(out);
    for line in LinesWithEndings::from(code) {
        let Ok(ops) = parse_line(&mut state, line, memo) else {
            // A grammar failure should not lose the code: the rest is plain.
            writer.text(
                None,
                &code[line.as_ptr() as usize - code.as_ptr() as usize..],
            );
            break;
        };
        let mut last = 0;
        for (index, op) in ops.iter() {
            let index = *index;
            if index > last {
                writer.text(kind_of(&stack), &line[last..index]);
                last = index;
            }
            let _ = stack.apply(op);
        }
        if last < line.len() {
            writer.text(kind_of(&stack), &line[last..]);
        }
    }
    writer.finish();
}

/// A console session: prompt lines (`$ `, `# `, `% `) are highlighted as
/// shell with the prompt marked `gp`; other lines are output (`go`).
fn console(code: &str, out: &mut String) {
    let bash = find_syntax("bash", "bash").expect("bash syntax is bundled");
    let mut continued = false;
    for line in LinesWithEndings::from(code) {
        let prompt = ["$ ", "# ", "% "]
            .iter()
            .find(|p| line.starts_with(**p))
            .copied()
            .or_else(|| (line.trim_end() == "$").then_some("$"));
        if let Some(prompt) = prompt {
            out.push_str("<span class=\"gp\">");
            crate::escape::html_into(prompt, out);
            out.push_str("</span>");
            let command = &line[prompt.len()..];
            tokens(bash, command, out);
            continued = command.trim_end().ends_with('\\');
        } else if continued {
            tokens(bash, line, out);
            continued = line.trim_end().ends_with('\\');
        } else {
            let (text, newline) = line.strip_suffix('\n').map_or((line, ""), |t| (t, "\n"));
            if !text.is_empty() {
                out.push_str("<span class=\"go\">");
                crate::escape::html_into(text, out);
                out.push_str("</span>");
            }
            out.push_str(newline);
        }
    }
}

fn kind_of(stack: &ScopeStack) -> Option<&'static str> {
    for scope in stack.as_slice().iter().rev() {
        for (prefix, kind) in KIND_SCOPES.iter() {
            if prefix.is_prefix_of(*scope) {
                return Some(kind);
            }
        }
    }
    None
}

/// Buffers text of one kind so that neighbours of the same kind share a span.
struct SpanWriter<'a> {
    out: &'a mut String,
    kind: Option<&'static str>,
    pending: String,
}

impl<'a> SpanWriter<'a> {
    fn new(out: &'a mut String) -> Self {
        SpanWriter {
            out,
            kind: None,
            pending: String::new(),
        }
    }

    fn text(&mut self, kind: Option<&'static str>, text: &str) {
        // Whitespace takes the kind of its neighbour, which keeps spans long.
        let kind = if text.trim().is_empty() && !self.pending.is_empty() {
            self.kind
        } else {
            kind
        };
        if kind != self.kind {
            self.flush();
            self.kind = kind;
        }
        self.pending.push_str(text);
    }

    fn flush(&mut self) {
        if self.pending.is_empty() {
            return;
        }
        match self.kind {
            Some(kind) => {
                let _ = write!(self.out, "<span class=\"{kind}\">");
                crate::escape::html_into(&self.pending, self.out);
                self.out.push_str("</span>");
            }
            None => crate::escape::html_into(&self.pending, self.out),
        }
        self.pending.clear();
    }

    fn finish(mut self) {
        self.flush();
    }
}

/// The stylesheet for token kinds: a light theme, and a dark one under
/// `prefers-color-scheme: dark`.
pub fn stylesheet() -> String {
    let themes = two_face::theme::extra();
    let light = themes.get(two_face::theme::EmbeddedThemeName::InspiredGithub);
    let dark = themes.get(two_face::theme::EmbeddedThemeName::OneHalfDark);
    let mut css =
        String::from("/* Generated by errata from the InspiredGitHub and OneHalfDark themes. */\n");
    theme_rules(light, "", &mut css);
    css.push_str(".code .gp{user-select:none;font-weight:600}\n");
    css.push_str("@media (prefers-color-scheme: dark){\n");
    theme_rules(dark, "", &mut css);
    css.push_str("}\n");
    css
}

/// WCAG AA contrast for normal text; token colours below it are adjusted.
const MIN_CONTRAST: f64 = 4.5;

fn theme_rules(theme: &Theme, indent: &str, css: &mut String) {
    let highlighter = ThemeHighlighter::new(theme);
    let hex = |c: Color| format!("#{:02x}{:02x}{:02x}", c.r, c.g, c.b);
    let bg = theme.settings.background.unwrap_or(Color::WHITE);
    if let Some(fg) = theme.settings.foreground {
        let _ = writeln!(
            css,
            "{indent}.code{{color:{};background:{}}}",
            hex(readable(fg, bg)),
            hex(bg)
        );
    }
    for (kind, scope) in STYLE_SCOPES {
        let scope = Scope::new(scope).expect("valid scope");
        let style = highlighter.style_for_stack(&[scope]);
        let mut rule = format!("color:{}", hex(readable(style.foreground, bg)));
        if style.font_style.contains(FontStyle::BOLD) {
            rule.push_str(";font-weight:bold");
        }
        if style.font_style.contains(FontStyle::ITALIC) {
            rule.push_str(";font-style:italic");
        }
        let _ = writeln!(css, "{indent}.code .{kind}{{{rule}}}");
    }
}

/// WCAG relative luminance of an sRGB colour.
fn luminance(c: Color) -> f64 {
    let channel = |v: u8| {
        let v = f64::from(v) / 255.0;
        if v <= 0.04045 {
            v / 12.92
        } else {
            ((v + 0.055) / 1.055).powf(2.4)
        }
    };
    0.2126 * channel(c.r) + 0.7152 * channel(c.g) + 0.0722 * channel(c.b)
}

/// WCAG contrast ratio between two colours (1 to 21).
fn contrast(a: Color, b: Color) -> f64 {
    let (la, lb) = (luminance(a), luminance(b));
    (la.max(lb) + 0.05) / (la.min(lb) + 0.05)
}

/// `fg`, moved towards black on a light background or white on a dark one
/// just far enough to reach [`MIN_CONTRAST`] against `bg`; themes' comment
/// colours are often too faint. The hue is kept as far as possible.
fn readable(fg: Color, bg: Color) -> Color {
    let target = if luminance(bg) > 0.18 {
        Color::BLACK
    } else {
        Color::WHITE
    };
    let mix = |t: f64| {
        let m = |a: u8, b: u8| (f64::from(a) + (f64::from(b) - f64::from(a)) * t).round() as u8;
        Color {
            r: m(fg.r, target.r),
            g: m(fg.g, target.g),
            b: m(fg.b, target.b),
            a: 0xff,
        }
    };
    (0..=50)
        .map(|step| mix(f64::from(step) / 50.0))
        .find(|c| contrast(*c, bg) >= MIN_CONTRAST)
        .unwrap_or(target)
}

#[cfg(test)]
mod tests;
