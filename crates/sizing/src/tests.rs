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
        intermediate: 11008,
        ..Model::dense(6_738_415_616.0, 32, 4096, 32, 32000)
    }
}

fn llama31_8b() -> Model {
    Model {
        kv_heads: 8,
        intermediate: 14336,
        ..Model::dense(8_030_261_248.0, 32, 4096, 32, 128_256)
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
    assert_eq!(GgmlType::Q8_0.bytes_per_weight() * 8.0, 8.5);
    assert_eq!(GgmlType::Q4_0.bytes_per_weight() * 8.0, 4.5);
    assert_eq!(GgmlType::Q4K.bytes_per_weight() * 8.0, 4.5);
    assert_eq!(GgmlType::Q6K.bytes_per_weight() * 8.0, 6.5625);
    assert_eq!(GgmlType::Q2K.bytes_per_weight() * 8.0, 2.625);
    assert_eq!(GgmlType::Mxfp4.bytes_per_weight() * 8.0, 4.25);
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
        kv_heads: 8,
        head_dim: 128,
        intermediate: 27648,
        ..Model::dense(32_763_876_352.0, 64, 5120, 40, 152_064)
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
    // vLLM's --gpu-memory-utilization is a fraction in (0, 1]: 1.5 or 0 is
    // refused, not clamped.
    let vllm = "params=8030261248\nlayers=32\nhidden=4096\nheads=32\nvocab=128256\nruntime=vllm";
    assert!(!handle(&format!("{vllm}\nutil=1")).contains("\"error\""));
    for util in ["1.5", "0", "1e-400"] {
        let answer = handle(&format!("{vllm}\nutil={util}"));
        assert!(
            answer.contains("`util` (vLLM's --gpu-memory-utilization) must be more than 0"),
            "{util}: {answer}"
        );
    }
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

fn mixtral_8x7b() -> Model {
    Model {
        kv_heads: 8,
        intermediate: 14336,
        experts: 8,
        experts_used: 2,
        ..Model::dense(46_702_792_704.0, 32, 4096, 32, 32000)
    }
}

fn gib_of(model: &Model, format: WeightFormat) -> f64 {
    weight_bytes(model, format) / GIB
}

#[test]
fn mixtral_8x7b_gguf_sizes_match_llama_cpp() {
    // llama.cpp PR #4406 (Mixtral support), llama-bench table at build 1631:
    // https://github.com/ggml-org/llama.cpp/pull/4406
    // Q8_0 46.22 GiB, Q6_K 35.74 GiB, Q4_0 24.62 GiB: the quantiser's
    // choices for these types have not changed since.
    let m = mixtral_8x7b();
    for (format, logged) in [
        (WeightFormat::Q8_0, 46.22),
        (WeightFormat::Q6K, 35.74),
        (WeightFormat::Q4_0, 24.62),
    ] {
        let ours = gib_of(&m, format);
        assert!(
            (ours - logged).abs() < 0.01,
            "{format:?}: {ours} vs {logged}"
        );
    }
}

#[test]
fn mixtral_q2_k_is_a_mix_not_an_average() {
    let m = mixtral_8x7b();
    // The same PR logged Q2_K at 14.57 GiB. At build 1631 the expert
    // tensors were stored one per expert (`ffn_down.0.weight`), which the
    // ffn_down rule did not match, and 8-expert models had no attn_output
    // rule: experts stayed Q2_K and attn_output took the dense Q3_K.
    // Summing our tensor shapes with those types gives the logged size,
    // which pins the shapes and the ggml block sizes.
    let build_1631: f64 = m
        .tensors()
        .iter()
        .map(|t| {
            let ty = match t.class {
                Class::AttnV | Class::AttnK => GgmlType::Q8_0,
                Class::AttnOutput => GgmlType::Q3K,
                Class::Output => GgmlType::Q6K,
                Class::Norm | Class::Router => GgmlType::F32,
                _ => GgmlType::Q2K,
            };
            t.params * ty.bytes_per_weight()
        })
        .sum();
    assert!(
        (build_1631 / GIB - 14.57).abs() < 0.01,
        "{}",
        build_1631 / GIB
    );
    // Today's llama-quant.cpp bumps the 8-expert attn_output to Q5_K and
    // every ffn_down (experts included) to Q3_K: 16.12 GiB. The old single
    // bits-per-weight figure (2.96 GiB for Llama-3-8B, scaled) said 17.21.
    let today = gib_of(&m, WeightFormat::Q2K);
    assert!((today - 16.12).abs() < 0.01, "{today}");
    let types: Vec<GgmlType> = m
        .tensors()
        .iter()
        .filter(|t| t.layer == 5)
        .map(|t| gguf_type(WeightFormat::Q2K, &m, t))
        .collect();
    assert_eq!(
        types,
        [
            GgmlType::Q2K,  // attn_q
            GgmlType::Q8_0, // attn_k: 8 experts
            GgmlType::Q8_0, // attn_v: 8 experts
            GgmlType::Q5K,  // attn_output: 8 experts
            GgmlType::Q2K,  // ffn_gate_exps + ffn_up_exps
            GgmlType::Q3K,  // ffn_down_exps
            GgmlType::F32,  // ffn_gate_inp
            GgmlType::F32,  // norms
        ]
    );
}

#[test]
fn mixtral_8x22b_q6_k_matches_a_llamafile_bench() {
    // llamafile-bench 0.8.6, Mixtral-8x22B-Instruct-v0.1.Q6_K: 107.61 GiB.
    // https://github.com/mozilla-ai/llamafile/issues/569
    let m = Model {
        kv_heads: 8,
        intermediate: 16384,
        experts: 8,
        experts_used: 2,
        ..Model::dense(0.0, 56, 6144, 48, 32768)
    };
    let ours = gib_of(&m, WeightFormat::Q6K);
    assert!((ours - 107.61).abs() < 0.02, "{ours}");
    // 141B parameters in memory, 39B of them used per token.
    assert!(
        (m.total_params() / 1e9 - 140.6).abs() < 0.1,
        "{}",
        m.total_params()
    );
    assert!(
        (m.active_params() / 1e9 - 39.2).abs() < 0.1,
        "{}",
        m.active_params()
    );
}

#[test]
fn llama_3_8b_k_quant_mixes_match_the_quantize_table() {
    // llama.cpp tools/quantize/README.md, Llama-3-8B: Q4_K_M 4.58 GiB,
    // Q2_K 2.96 GiB (whole file).
    let m = llama31_8b();
    for (format, logged) in [(WeightFormat::Q4KM, 4.58), (WeightFormat::Q2K, 2.96)] {
        let ours = gib_of(&m, format);
        assert!((ours - logged).abs() < 0.01, "{format:?}: {ours}");
    }
    // Q4_K_M gives attn_v and ffn_down Q6_K on half the layers (use_more_bits).
    let six: usize = m
        .tensors()
        .iter()
        .filter(|t| gguf_type(WeightFormat::Q4KM, &m, t) == GgmlType::Q6K)
        .count();
    assert_eq!(six, 16 + 16 + 1, "attn_v, ffn_down, output");
}

#[test]
fn llama_cpp_keeps_token_embeddings_in_system_ram() {
    // llama.cpp loading Llama-3-8B Q4_K_M fully offloaded (33/33 layers):
    // "CPU buffer size = 281.81 MiB", "CUDA0 buffer size = 4403.49 MiB",
    // and 33 q6_K / 193 q4_K / 65 f32 tensors.
    // https://github.com/developer0hye/llama-3-korean-bllossom-8b-q4-docker (README log)
    let mut input = Input::new(llama31_8b());
    input.runtime = Runtime::LlamaCpp;
    input.weights = WeightFormat::Q4KM;
    input.context = 512;
    input.flash_attention = false;
    let b = estimate(&input);
    assert!((b.host / MIB_U - 281.81).abs() < 0.01, "{}", b.host / MIB_U);
    assert!(
        (b.weights / MIB_U - 4403.49).abs() < 0.01,
        "{}",
        b.weights / MIB_U
    );
    // "KV self size = 64.00 MiB" at n_ctx 512.
    assert_eq!(b.kv_cache, 64.0 * MIB_U);
}

#[test]
fn vllm_tensor_parallel_splits_weights_and_keeps_the_profile() {
    // vLLM PR #10511, `vllm serve meta-llama/Meta-Llama-3-8B` on an H100
    // (79.22 GiB): "model weights take 14.96GiB", with -tp 2 "7.48GiB";
    // "PyTorch activation peak memory 1.26GiB" in both (8192 batched tokens).
    // https://github.com/vllm-project/vllm/pull/10511
    let mut input = Input::new(llama31_8b());
    input.runtime = Runtime::Vllm;
    input.weights = WeightFormat::Bf16;
    input.context = 8192;
    let one = estimate(&input);
    input.tensor_parallel = 2;
    let two = estimate(&input);
    assert!((one.weights / GIB - 14.96).abs() < 0.005);
    assert!(
        (two.weights / GIB - 7.48).abs() < 0.005,
        "{}",
        two.weights / GIB
    );
    let peak = (one.compute - VLLM_NON_TORCH) / GIB;
    assert!((peak - 1.26).abs() < 0.03, "{peak}");
    assert_eq!(one.compute, two.compute);
    // 8 KV heads over 2 GPUs: half the KV cache per GPU for the same tokens.
    assert_eq!(two.kv_cache * 2.0, one.kv_cache);
    // With 16 GPUs each holds one KV head in full (replicated).
    input.tensor_parallel = 16;
    let sixteen = estimate(&input);
    assert_eq!(sixteen.kv_cache, one.kv_cache / 8.0);
    assert!(sixteen.replicated >= sixteen.kv_cache + sixteen.compute + sixteen.overhead);
}

#[test]
fn offload_finds_the_largest_ngl_that_fits() {
    let mut input = Input::new(Model {
        kv_heads: 8,
        intermediate: 28672,
        ..Model::dense(70_553_706_496.0, 80, 8192, 64, 128_256)
    });
    input.runtime = Runtime::LlamaCpp;
    input.weights = WeightFormat::Q4KM;
    input.context = 8192;
    input.gpus = catalogue();
    input.gpu = Some(1);
    let gpu = input.gpus[1].clone();
    let o = offload(&input, &gpu).expect("70B Q4_K_M does not fit 24 GiB");
    assert!(o.gpu_layers > 30 && o.gpu_layers < 81, "{o:?}");
    assert!(o.gpu <= gpu.memory_mib * MIB_U);
    // One more layer would not fit, and what leaves the GPU goes to RAM.
    let model = weight_bytes(&input.model, input.weights);
    assert!(o.host > model * 0.4 && o.host < model, "{o:?}");
    let s = suggestions(&input);
    assert!(s.contains(&format!("-ngl {}", o.gpu_layers)), "{s:?}");
    input.runtime = Runtime::Ollama;
    let s = suggestions(&input);
    assert!(
        s.iter().any(|s| s.starts_with("PARAMETER num_gpu ")),
        "{s:?}"
    );
    // Two 24 GiB cards hold it whole: no offload.
    input.runtime = Runtime::LlamaCpp;
    input.tensor_parallel = 2;
    let b = estimate(&input);
    assert!(b.total() < gpu.memory_mib * MIB_U, "{}", b.total() / GIB);
    assert_eq!(offload(&input, &gpu), None);
}
