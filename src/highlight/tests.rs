use super::*;

fn html(lang: &str, code: &str) -> String {
    highlight_uncached(lang, code).html.to_string()
}

#[test]
fn required_languages_are_highlighted() {
    let samples = [
        ("bash", "export A=1\necho \"$A\"\n"),
        ("sh", "if [ -f x ]; then echo y; fi\n"),
        ("shell", "for i in 1 2; do echo $i; done\n"),
        ("zsh", "export A=\"x\"\n"),
        (
            "powershell",
            "$env:CUDA_VISIBLE_DEVICES = \"0\"\nWrite-Host 'hi'\n",
        ),
        ("python", "import torch\nx = torch.zeros(3)  # c\n"),
        ("yaml", "key: \"value\"\nn: 3\n"),
        ("toml", "[a]\nb = \"c\"\n"),
        ("json", "{\"a\": 1}\n"),
        ("dockerfile", "FROM ubuntu:24.04\nRUN echo hi\n"),
        ("ini", "[section]\nkey = value\n"),
        ("rust", "fn main() { let x = 1; }\n"),
        ("c", "int main(void) { return 0; }\n"),
        ("cpp", "#include <vector>\nint main() { return 0; }\n"),
    ];
    for (lang, code) in samples {
        let h = highlight_uncached(lang, code);
        assert!(h.known_language, "{lang} not known");
        assert!(
            h.html.contains("<span class="),
            "{lang} not highlighted: {}",
            h.html
        );
    }
}

#[test]
fn console_marks_prompts_and_output() {
    let out = html("console", "$ nvidia-smi --query\nGPU 0: 24 GiB\n");
    assert!(out.contains("<span class=\"gp\">$ </span>"), "{out}");
    assert!(
        out.contains("<span class=\"go\">GPU 0: 24 GiB</span>"),
        "{out}"
    );
}

#[test]
fn unknown_and_plain_languages_are_escaped_text() {
    let h = highlight_uncached("klingon", "<b>&</b>\n");
    assert!(!h.known_language);
    assert!(h.html.contains("&lt;b&gt;&amp;&lt;/b&gt;"));
    let h = highlight_uncached("log", "<oom>\n");
    assert!(h.known_language);
    assert!(!h.html.contains("<span"));
}

#[test]
fn highlighted_output_is_pinned() {
    let samples = [
        (
            "console",
            "$ nvidia-smi --query-gpu=memory.used --format=csv\nmemory.used [MiB]\n23456 MiB\n# echo root prompt\n",
        ),
        (
            "python",
            "import torch\nx = torch.zeros((2, 3), dtype=torch.float16)  # on CPU\nprint(f\"{x.shape}\")\n",
        ),
        (
            "yaml",
            "server:\n  gpu_memory_utilization: 0.9\n  name: \"vllm\"\n",
        ),
        ("toml", "[links]\nexternal_nofollow = true\n"),
        (
            "dockerfile",
            "FROM nvidia/cuda:12.4.1-runtime-ubuntu22.04\nENV PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\n",
        ),
    ];
    let all: String = samples
        .iter()
        .map(|(lang, code)| format!("{lang}:\n{}\n", html(lang, code)))
        .collect();
    insta::assert_snapshot!(all);
}

#[test]
fn line_memo_changes_nothing_even_when_a_line_recurs_in_another_state() {
    // The same line text inside and outside a multi-line string or
    // heredoc must keep its own tokens: the memo is keyed by the state.
    let samples = [
        ("python", "x = 1\n\"\"\"\nx = 1\n\"\"\"\nx = 1 # c\nx = 1\n"),
        (
            "bash",
            "echo $HOME\ncat <<EOF\necho $HOME\nEOF\necho $HOME\n",
        ),
        ("rust", "let a = 1;\n/*\nlet a = 1;\n*/\nlet a = 1;\n"),
        ("yaml", "key: value\ntext: |\n  key: value\nkey: value\n"),
        ("c", "int x = 0;\n#if 0\nint x = 0;\n#endif\nint x = 0;\n"),
    ];
    for (lang, code) in samples {
        let syntax = find_syntax(lang, lang).unwrap();
        let mut fresh = String::new();
        tokens_with(syntax, code, &mut fresh, false);
        for round in 0..3 {
            let mut memo = String::new();
            tokens_with(syntax, code, &mut memo, true);
            assert_eq!(memo, fresh, "{lang}, round {round}");
        }
    }
    let remembered = MEMO.with_borrow(|m| m.get("x = 1\n").map_or(0, Vec::len));
    assert!(remembered >= 2, "one entry per state, got {remembered}");
}

#[test]
fn cache_returns_the_same_block() {
    let h = Highlighter::default();
    let a = h.highlight("bash", "echo hi\n");
    let b = h.highlight("bash", "echo hi\n");
    assert!(Arc::ptr_eq(&a.html, &b.html));
}

#[test]
fn stylesheet_has_both_schemes() {
    let css = stylesheet();
    assert!(css.contains(".code .k{"));
    assert!(css.contains("prefers-color-scheme: dark"));
}

#[test]
fn faint_colours_are_made_readable_and_readable_ones_kept() {
    let white = Color::WHITE;
    let dark = Color {
        r: 0x28,
        g: 0x2c,
        b: 0x34,
        a: 0xff,
    };
    let faint = Color {
        r: 0x96,
        g: 0x98,
        b: 0x96,
        a: 0xff,
    };
    assert!(contrast(faint, white) < MIN_CONTRAST);
    assert!(contrast(readable(faint, white), white) >= MIN_CONTRAST);
    let dim = Color {
        r: 0x5c,
        g: 0x63,
        b: 0x70,
        a: 0xff,
    };
    assert!(contrast(readable(dim, dark), dark) >= MIN_CONTRAST);
    let black = Color::BLACK;
    assert_eq!(readable(black, white), black);
    assert!((contrast(black, white) - 21.0).abs() < 1e-9);
}
