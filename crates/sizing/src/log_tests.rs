//! Mixture-of-experts models of 2025 against figures llama.cpp, Ollama and
//! vLLM printed in public issues: quantisation mixes, tensor parallelism
//! and partial offload. Each test names its source.

use crate::*;

const MIB_U: f64 = 1_048_576.0;

/// Qwen/Qwen3-30B-A3B config.json.
fn qwen3_30b_a3b() -> Model {
    Model {
        kv_heads: 4,
        head_dim: 128,
        intermediate: 6144,
        experts: 128,
        experts_used: 8,
        expert_intermediate: 768,
        ..Model::dense(0.0, 48, 2048, 32, 151_936)
    }
}

/// Qwen/Qwen3-235B-A22B config.json.
fn qwen3_235b_a22b() -> Model {
    Model {
        kv_heads: 4,
        head_dim: 128,
        intermediate: 12288,
        experts: 128,
        experts_used: 8,
        expert_intermediate: 1536,
        ..Model::dense(0.0, 94, 4096, 64, 151_936)
    }
}

/// `value` within `percent` % of `logged`.
fn within(value: f64, logged: f64, percent: f64) -> bool {
    (value - logged).abs() <= logged * percent / 100.0
}

#[test]
fn qwen3_30b_a3b_q4_k_m_partial_offload_matches_llama_cpp() {
    // llama.cpp issue #13729 (build b5466, Qwen3-30B-A3B-Q4_K_M.gguf on an
    // RTX 4080 SUPER, -ngl 30): "offloaded 30/49 layers to GPU",
    // "CUDA0 model buffer size = 10750.86 MiB",
    // "CPU_Mapped model buffer size = 6940.48 MiB".
    // https://github.com/ggml-org/llama.cpp/issues/13729
    let m = qwen3_30b_a3b();
    let p = Profile::new(&m, WeightFormat::Q4KM);
    // llama.cpp offloads the last layers; the head stays on the CPU below
    // 49. The 0.03 MiB left are the q/k norms, which are not modelled.
    let gpu: f64 = p.layers[48 - 30..].iter().sum();
    let cpu = p.total - gpu;
    assert!(within(gpu / MIB_U, 10750.86, 0.01), "{}", gpu / MIB_U);
    assert!(within(cpu / MIB_U, 6940.48, 0.01), "{}", cpu / MIB_U);
    // The experts keep the mix's Q4_K/Q6_K split, not one average.
    let bits = p.total * 8.0 / m.total_params();
    assert!(bits > 4.8 && bits < 4.9, "{bits}");
}

#[test]
fn qwen3_235b_a22b_q4_k_m_file_matches_ollama() {
    // Ollama issue #10810 (qwen3:235b, llama.cpp's loader in Ollama):
    // "file type = Q4_K - Medium", "file size = 132.63 GiB (4.85 BPW)".
    // https://github.com/ollama/ollama/issues/10810
    let m = qwen3_235b_a22b();
    let gib = weight_bytes(&m, WeightFormat::Q4KM) / GIB;
    assert!(within(gib, 132.63, 0.25), "{gib}");
    let bits = WeightFormat::Q4KM.bits_per_weight(&m);
    assert!((bits - 4.85).abs() < 0.02, "{bits}");
}

#[test]
fn vllm_tensor_parallel_moe_weights_match_the_logs() {
    // vLLM issue #17469 (v0.8.5, Qwen/Qwen3-30B-A3B on 4 × A10, TP 4):
    // every worker logs "Model loading took 14.2474 GiB".
    // https://github.com/vllm-project/vllm/issues/17469
    let mut input = Input::new(qwen3_30b_a3b());
    input.runtime = Runtime::Vllm;
    input.weights = WeightFormat::Bf16;
    input.tensor_parallel = 4;
    let per_gpu = estimate(&input).weights / GIB;
    assert!(within(per_gpu, 14.2474, 0.1), "{per_gpu}");
    // vLLM issue #18446 (Qwen/Qwen3-235B-A22B in bf16, one worker per GPU):
    // "Model loading took 54.9206 GiB"; 438 GiB of weights over 8 GPUs.
    // https://github.com/vllm-project/vllm/issues/18446
    let mut input = Input::new(qwen3_235b_a22b());
    input.runtime = Runtime::Vllm;
    input.weights = WeightFormat::Bf16;
    input.tensor_parallel = 8;
    let per_gpu = estimate(&input).weights / GIB;
    assert!(within(per_gpu, 54.9206, 0.25), "{per_gpu}");
    // Norms and routers are whole on every GPU; the rest is split.
    let b = estimate(&input);
    assert!(b.weights * 8.0 > b.model);
}
