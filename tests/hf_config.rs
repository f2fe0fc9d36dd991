//! `errata size --config`: real `config.json` files read into the
//! calculator's model. Each fixture in `tests/fixtures/hf-config/` is the
//! file a Hugging Face repository publishes (named below); the parameter
//! counts asserted are the ones those repositories report for their
//! safetensors, which the shapes must reproduce.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

#[path = "support/errata_size.rs"]
mod errata_size;
use errata_size::{errata_size, size_json};

use errata::calculator::hf_config::{self, ReadConfig};

const REPO: &str = env!("CARGO_MANIFEST_DIR");

fn fixture(name: &str) -> PathBuf {
    Path::new(REPO).join("tests/fixtures/hf-config").join(name)
}

fn read(name: &str) -> ReadConfig {
    hf_config::read(&fixture(name)).unwrap_or_else(|d| panic!("{d}"))
}

/// `value` within `tolerance` (a fraction) of `expected`.
fn near(value: f64, expected: f64, tolerance: f64) -> bool {
    (value - expected).abs() <= expected * tolerance
}

#[test]
fn llama_counts_every_parameter() {
    // meta-llama/Llama-3.1-8B config.json (copy in citsjtu2020/LLM-Prof
    // sglang/Model_Config.md); 8,030,261,248 parameters.
    let r = read("llama-3.1-8b.json");
    let m = &r.model;
    assert_eq!(
        (m.layers, m.hidden, m.heads, m.kv_heads, m.head_dim),
        (32, 4096, 32, 8, 128)
    );
    assert_eq!(
        (m.vocab, m.intermediate, m.tied_embeddings),
        (128_256, 14_336, false)
    );
    assert_eq!(m.total_params(), 8_030_261_248.0);
    assert_eq!(r.max_context, Some(131_072));
}

#[test]
fn qwen3_dense_and_moe() {
    // Qwen/Qwen3-8B config.json (same copy); 8,190,735,360 parameters, of
    // which 9,216 are the q/k norms the calculator does not list.
    let dense = read("qwen3-8b.json").model;
    assert_eq!((dense.layers, dense.kv_heads, dense.head_dim), (36, 8, 128));
    assert!(near(dense.total_params(), 8_190_735_360.0, 1e-5));
    assert_eq!(dense.sliding_layers, 0, "use_sliding_window is false");
    // Qwen/Qwen3-30B-A3B config.json (same copy): 30.5B total, 3.3B active.
    let moe = read("qwen3-30b-a3b.json").model;
    assert_eq!(
        (moe.experts, moe.experts_used, moe.expert_intermediate),
        (128, 8, 768)
    );
    assert_eq!((moe.shared_intermediate, moe.dense_layers), (0, 0));
    assert!(near(moe.total_params(), 30_532_122_624.0, 1e-5));
    assert!(
        near(moe.active_params(), 3.35e9, 0.01),
        "{}",
        moe.active_params()
    );
}

#[test]
fn mixtral_experts_use_intermediate_size() {
    // mistralai/Mixtral-8x7B-v0.1 config.json; 46,702,792,704 parameters.
    let m = read("mixtral-8x7b.json").model;
    assert_eq!(
        (m.experts, m.experts_used, m.expert_intermediate),
        (8, 2, 14_336)
    );
    assert_eq!(m.total_params(), 46_702_792_704.0);
    assert!(
        near(m.active_params(), 12.9e9, 0.01),
        "{}",
        m.active_params()
    );
}

#[test]
fn phi3_mini() {
    // microsoft/Phi-3-mini-4k-instruct config.json; 3,821,079,552 parameters.
    let m = read("phi-3-mini-4k.json").model;
    assert_eq!(m.total_params(), 3_821_079_552.0);
    assert_eq!(m.sliding_layers, 0);
}

#[test]
fn gemma3_reads_text_config_and_its_defaults() {
    // google/gemma-3-4b-it config.json: the language model under
    // text_config, which leaves heads, KV heads, head_dim and vocab to
    // Gemma3TextConfig's defaults.
    let r = read("gemma-3-4b-it.json");
    let m = &r.model;
    assert_eq!(r.model_type, "gemma3_text");
    assert_eq!(
        (m.layers, m.hidden, m.heads, m.kv_heads, m.head_dim),
        (34, 2560, 8, 4, 256)
    );
    assert_eq!((m.vocab, m.tied_embeddings), (262_208, true));
    // Five of every six layers slide over 1,024 tokens.
    assert_eq!((m.sliding_window, m.sliding_layers), (1024, 29));
    assert!(near(m.total_params(), 3.88e9, 0.01), "{}", m.total_params());
}

#[test]
fn gpt_oss_layer_types_and_experts_per_token() {
    // openai/gpt-oss-20b config.json; 20,914,757,184 parameters, of which
    // the attention and expert biases (0.03%) are not listed.
    let m = read("gpt-oss-20b.json").model;
    assert_eq!(
        (m.experts, m.experts_used, m.expert_intermediate),
        (32, 4, 2880)
    );
    assert_eq!((m.sliding_window, m.sliding_layers), (128, 12));
    assert!(
        near(m.total_params(), 20_914_757_184.0, 5e-4),
        "{}",
        m.total_params()
    );
}

#[test]
fn deepseek_latent_attention_and_shared_experts() {
    // deepseek-ai/DeepSeek-R1 config.json: 671B parameters in the main
    // model (685B with the multi-token-prediction layer, not loaded for
    // inference).
    let m = read("deepseek-r1.json").model;
    assert_eq!((m.experts, m.experts_used, m.dense_layers), (256, 8, 3));
    assert_eq!((m.expert_intermediate, m.shared_intermediate), (2048, 2048));
    assert!(near(m.total_params(), 671e9, 0.002), "{}", m.total_params());
    // The cache holds kv_lora_rank + qk_rope_head_dim = 576 values per
    // token and layer: 70,272 bytes per token in 16 bits.
    assert_eq!(
        sizing::kv_bytes_per_token(&m, sizing::KvType::F16),
        61.0 * 576.0 * 2.0
    );
}

#[test]
fn errata_size_reads_a_config_and_agrees_with_the_preset() {
    let size = |args: &[&str]| {
        let mut all = vec!["--weights", "q4_k_m"];
        all.extend_from_slice(args);
        size_json(all).unwrap()
    };
    let config = fixture("mixtral-8x7b.json");
    let from_file = size(&["--config", config.to_str().unwrap()]);
    let preset = size(&["--model", "mixtral-8x7b"]);
    for key in [
        "weights_gib",
        "kv_cache_gib",
        "total_gib",
        "params_b",
        "active_params_b",
    ] {
        assert_eq!(from_file[key], preset[key], "{key}");
    }
}

#[test]
fn bad_config_files_are_located_errors() {
    let dir = tempfile::tempdir().unwrap();
    let run = |name: &str, text: &str| {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        let out = errata_size([OsStr::new("--config"), path.as_os_str()]);
        assert_eq!(out.status.code(), Some(1), "{name}");
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        (path.display().to_string(), stderr)
    };
    // A value of the wrong type, on line 3.
    let (path, e) = run(
        "a.json",
        "{\n  \"hidden_size\": 4096,\n  \"num_hidden_layers\": \"32\"\n}\n",
    );
    assert!(e.contains(&format!("{path}:3:")), "{e}");
    assert!(e.contains("invalid type: string \"32\""), "{e}");
    // Broken JSON.
    let (path, e) = run("b.json", "{\n  \"hidden_size\": 4096,,\n}");
    assert!(e.contains(&format!("{path}:2:")), "{e}");
    // A key missing inside text_config points at text_config's object.
    let (path, e) = run(
        "c.json",
        "{\n  \"model_type\": \"llava\",\n  \"text_config\": {\n    \"hidden_size\": 4096\n  }\n}",
    );
    assert!(
        e.contains(&format!(
            "{path}:3:18: error: config.json has no `num_hidden_layers` in `text_config`"
        )),
        "{e}"
    );
    // Not a language model at all.
    let (path, e) = run("d.json", "[1, 2]");
    assert!(e.contains(&format!("{path}:1:1")), "{e}");
}

#[test]
fn presets_agree_with_their_config_json() {
    // data/models.yaml was typed by hand; each preset with a real config.json
    // here must describe the same architecture (the sources are named in the
    // tests above and in the YAML).
    let catalogue = errata::calculator::Catalogue::load(Path::new(REPO)).unwrap();
    for (preset, file) in [
        ("llama-3.1-8b", "llama-3.1-8b.json"),
        ("deepseek-r1-distill-llama-8b", "llama-3.1-8b.json"),
        ("qwen3-4b", "qwen3-4b.json"),
        ("qwen3-8b", "qwen3-8b.json"),
        ("qwen3-14b", "qwen3-14b.json"),
        ("qwen3-32b", "qwen3-32b.json"),
        ("qwen3-30b-a3b", "qwen3-30b-a3b.json"),
        ("mixtral-8x7b", "mixtral-8x7b.json"),
        ("phi-3-mini", "phi-3-mini-4k.json"),
        ("gemma-3-4b", "gemma-3-4b-it.json"),
        ("gpt-oss-20b", "gpt-oss-20b.json"),
    ] {
        let p = &catalogue.model(preset).unwrap().model;
        let c = read(file).model;
        let shape = |m: &sizing::Model| {
            (
                (m.layers, m.hidden, m.heads, m.kv_heads, m.head_dim, m.vocab),
                (m.tied_embeddings, m.experts, m.experts_used, m.dense_layers),
                (m.sliding_window, m.sliding_layers),
            )
        };
        assert_eq!(shape(p), shape(&c), "{preset}");
        assert_eq!(p.total_params(), c.total_params(), "{preset}");
        assert_eq!(p.active_params(), c.active_params(), "{preset}");
    }
}
