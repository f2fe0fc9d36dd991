//! Unit tests against figures the runtimes print.

use crate::fit::fits;
use crate::json::gib;
use crate::parse::parse_decimal;
use crate::*;
use alloc::format;
use alloc::vec::Vec;

const MIB_U: f64 = 1_048_576.0;

fn llama2_7b() -> Model {
    Model {
        params: 6_738_415_616.0,
        layers: 32,
        hidden: 4096,
        heads: 32,
        kv_heads: 32,
        head_dim: 128,
        vocab: 32000,
        tied_embeddings: false,
    }
}

fn llama31_8b() -> Model {
    Model {
        params: 8_030_261_248.0,
        layers: 32,
        hidden: 4096,
        heads: 32,
        kv_heads: 8,
        head_dim: 128,
        vocab: 128_256,
        tied_embeddings: false,
    }
}

#[test]
fn llama2_7b_f16_kv_at_2048_is_512_mib_each() {
    // llama.cpp: "KV self size = 1024.00 MiB, K (f16): 512.00 MiB, V (f16): 512.00 MiB".
    let per_token = kv_bytes_per_token(&llama2_7b(), KvType::F16);
    assert_eq!(per_token * 2048.0 / 2.0, 512.0 * MIB_U);
    let mut input = Input::new(llama2_7b());
    input.runtime = Runtime::LlamaCpp;
    input.context = 2048;
    assert_eq!(estimate(&input).kv_cache, 1024.0 * MIB_U);
}

#[test]
fn llama31_8b_bf16_weights_are_14_96_gib() {
    let w = weight_bytes(&llama31_8b(), WeightFormat::Bf16) / GIB;
    assert!((w - 14.96).abs() < 0.005, "{w}");
}

#[test]
fn gqa_uses_kv_heads() {
    // 32 layers × 8 KV heads × 128 × 2 (K and V) × 2 bytes = 128 KiB per token.
    assert_eq!(kv_bytes_per_token(&llama31_8b(), KvType::F16), 131_072.0);
}

#[test]
fn ggml_block_sizes() {
    assert_eq!(WeightFormat::Q8_0.bits_per_weight(), 8.5);
    assert_eq!(WeightFormat::Q4_0.bits_per_weight(), 4.5);
    assert_eq!(KvType::Q8_0.bytes(), 1.0625);
    assert_eq!(KvType::Q4_0.bytes(), 0.5625);
    // Q4_K_M of Llama-3-8B is 4.58 GiB as a whole file.
    let q4 = weight_bytes(&llama31_8b(), WeightFormat::Q4KM) / GIB;
    assert!((q4 - 4.58).abs() < 0.005, "{q4}");
}

#[test]
fn llama_cpp_shares_context_ollama_multiplies_it() {
    let mut input = Input::new(llama31_8b());
    input.context = 8192;
    input.parallel = 4;
    input.runtime = Runtime::LlamaCpp;
    assert_eq!(estimate(&input).kv_tokens, 8192);
    input.runtime = Runtime::Ollama;
    assert_eq!(estimate(&input).kv_tokens, 32768);
    // Padding: 1000 tokens become 1024 with flash attention on.
    input.runtime = Runtime::LlamaCpp;
    input.context = 1000;
    assert_eq!(estimate(&input).kv_tokens, 1024);
}

#[test]
fn flash_attention_shrinks_the_llama_cpp_compute_buffer() {
    let mut input = Input::new(llama31_8b());
    input.runtime = Runtime::LlamaCpp;
    input.context = 32768;
    let on = estimate(&input).compute;
    input.flash_attention = false;
    let off = estimate(&input).compute;
    assert!(off > on + GIB, "off {off} on {on}");
}

#[test]
fn training_counts_gradients_and_adam_and_checkpointing_helps() {
    let mut input = Input::new(llama31_8b());
    input.train = true;
    input.weights = WeightFormat::Bf16;
    input.context = 2048;
    let b = estimate(&input);
    // 2 + 2 + 4 + 8 bytes per parameter.
    assert!((b.weights / 8_030_261_248.0 - 16.0).abs() < 1e-9);
    input.checkpointing = true;
    assert!(estimate(&input).compute < b.compute / 2.0);
}

fn catalogue() -> Vec<Gpu> {
    alloc::vec![
        Gpu {
            name: "RTX 3060 12GB".into(),
            memory_mib: 12288.0
        },
        Gpu {
            name: "RTX 4090".into(),
            memory_mib: 24564.0
        },
        Gpu {
            name: "H100 80GB".into(),
            memory_mib: 81559.0
        },
    ]
}

#[test]
fn fits_and_max_context_agree() {
    let mut input = Input::new(llama31_8b());
    input.runtime = Runtime::LlamaCpp;
    input.weights = WeightFormat::Q4KM;
    input.context = 8192;
    input.gpus = catalogue();
    input.gpu = Some(0);
    let names: Vec<_> = fits_on(&input)
        .iter()
        .map(|f| input.gpus[f.gpu].name.clone())
        .collect();
    assert_eq!(names, ["RTX 3060 12GB", "RTX 4090", "H100 80GB"]);
    let max = max_context(&input).unwrap();
    let mut at = input.clone();
    at.context = max;
    assert!(fits(&at, &estimate(&at), &at.gpus[0]));
    at.context = max + 256;
    assert!(!fits(&at, &estimate(&at), &at.gpus[0]));
}

#[test]
fn vllm_suggestions_are_in_its_own_syntax_and_really_fit() {
    let mut input = Input::new(llama31_8b());
    input.runtime = Runtime::Vllm;
    input.weights = WeightFormat::Bf16;
    input.context = 131_072;
    input.gpus = catalogue();
    input.gpu = Some(1);
    let s = suggestions(&input);
    assert!(s.iter().any(|s| s.starts_with("--max-model-len ")), "{s:?}");
    let n: u64 = s[0].trim_start_matches("--max-model-len ").parse().unwrap();
    let mut fixed = input.clone();
    fixed.context = n;
    assert!(fits(&fixed, &estimate(&fixed), &fixed.gpus[1]));
}

#[test]
fn too_big_models_get_a_smaller_format_with_a_context_that_fits() {
    let qwen32 = Model {
        params: 32_763_876_352.0,
        layers: 64,
        hidden: 5120,
        heads: 40,
        kv_heads: 8,
        head_dim: 128,
        vocab: 152_064,
        tied_embeddings: false,
    };
    let mut input = Input::new(qwen32);
    input.runtime = Runtime::Vllm;
    input.weights = WeightFormat::Bf16;
    input.context = 32768;
    input.gpus = catalogue();
    input.gpu = Some(1);
    let b = estimate(&input);
    // Not fitting, the KV cache shows what one full-length sequence needs.
    assert_eq!(b.kv_tokens, 32768);
    let s = suggestions(&input);
    let last = s.last().unwrap();
    let (format, n) = last
        .strip_prefix("weights ")
        .unwrap()
        .split_once(" with --max-model-len ")
        .unwrap();
    let mut fixed = input.clone();
    fixed.weights = WeightFormat::parse(format).unwrap();
    fixed.context = n.parse().unwrap();
    assert!(fits(&fixed, &estimate(&fixed), &fixed.gpus[1]), "{last}");
}

#[test]
fn hand_written_number_formatting() {
    assert_eq!(gib(14.96 * GIB), "14.96");
    assert_eq!(gib(4.0 * GIB), "4.00");
    assert_eq!(gib(0.004 * GIB), "0.00");
    assert_eq!(gib(-11.386 * GIB), "-11.39");
    assert_eq!(parse_decimal("0.9"), Some(0.9));
    assert_eq!(parse_decimal("24564"), Some(24564.0));
    assert_eq!(parse_decimal("1e3"), Some(1000.0));
    for bad in ["", ".", "-1", "x", "1.2.3"] {
        assert_eq!(parse_decimal(bad), None, "{bad}");
    }
}

#[test]
fn requests_round_trip() {
    let answer = handle(
        "params=8030261248\nlayers=32\nhidden=4096\nheads=32\nkv_heads=8\nhead_dim=128\nvocab=128256\nweights=bf16\ncontext=8192\nruntime=vllm\ngpu=RTX 4090|24564\ntarget=RTX 4090",
    );
    assert!(answer.starts_with("{\"weights_gib\":14.96,"), "{answer}");
    assert!(
        answer.contains("\"target\":{\"name\":\"RTX 4090\""),
        "{answer}"
    );
    assert!(handle("layers=x").contains("\"error\":\"`layers` must be a whole number"));
    assert!(
        handle("params=1\nlayers=1\nhidden=1\nheads=1\nvocab=1\nbogus=2")
            .contains("unknown key `bogus`")
    );
}

const LLAMA31_8B: &str = "layers=32\nhidden=4096\nheads=32\nkv_heads=8\nhead_dim=128\nvocab=128256\nweights=bf16\nruntime=vllm\ngpu=RTX 3090|24576\ngpu=RTX 4090|24564\n";

#[test]
fn requests_take_counts_slugs_and_memory_as_typed() {
    let exact = handle(&format!("{LLAMA31_8B}params=8030261248\ntarget=RTX 3090"));
    // The same card by slug, and as a bare amount of memory.
    for other in [
        "params=8.030261248e9\ntarget=rtx-3090",
        "params=8030261248\ntarget=rtx3090",
        "params=8030261248\ngpu_memory=24GiB",
        "params=8030261248\ngpu_memory=24576MiB",
    ] {
        let answer = handle(&format!("{LLAMA31_8B}{other}"));
        let figures = |a: &str| a[..a.find(",\"target\"").unwrap()].to_string();
        assert_eq!(figures(&answer), figures(&exact), "{other}");
        assert!(
            answer.contains("\"memory_gib\":24.00,\"fits\":true"),
            "{answer}"
        );
    }
    let b7 = handle(&format!("{LLAMA31_8B}params=8B"));
    assert!(b7.contains("\"weights_gib\":14.90,"), "{b7}");
    let unknown = handle(&format!("{LLAMA31_8B}params=8B\ntarget=rtx 3009"));
    assert!(
        unknown.contains("unknown GPU `rtx 3009`; did you mean `RTX 3090`"),
        "{unknown}"
    );
    let both = handle(&format!(
        "{LLAMA31_8B}params=8B\ntarget=RTX 3090\ngpu_memory=24GiB"
    ));
    assert!(both.contains("not both"), "{both}");
    let bad = handle(&format!("{LLAMA31_8B}params=8 bananas"));
    assert!(
        bad.contains("`params`: `8 bananas` is not a parameter count"),
        "{bad}"
    );
}
