//! `errata size` as a user runs it: the real binary, the repository's data/.

#[path = "support/errata_size.rs"]
mod errata_size;

/// `errata size --format json ARGS`: the answer, or standard error.
fn size(args: &[&str]) -> Result<serde_json::Value, String> {
    errata_size::size_json(args)
}

const LLAMA2_7B: &[&str] = &[
    "--layers",
    "32",
    "--hidden",
    "4096",
    "--heads",
    "32",
    "--vocab",
    "32000",
    "--weights",
    "q4_0",
    "--runtime",
    "llama.cpp",
];

fn figures(v: &serde_json::Value) -> Vec<serde_json::Value> {
    ["weights_gib", "kv_cache_gib", "compute_gib", "total_gib"]
        .iter()
        .map(|k| v[k].clone())
        .collect()
}

#[test]
fn params_take_exponents_and_suffixes() {
    let with = |params: &str| {
        let mut args = vec!["--params", params];
        args.extend_from_slice(LLAMA2_7B);
        size(&args)
    };
    let exact = with("6740000000").unwrap();
    for same in ["6.74e9", "6.74E9", "6.74b", "6.74B", "6_740_000_000"] {
        assert_eq!(figures(&with(same).unwrap()), figures(&exact), "{same}");
    }
    assert!(with("7B").unwrap()["weights_gib"].as_f64().unwrap() > 3.6);
    assert!(with("1.5T").unwrap()["weights_gib"].as_f64().unwrap() > 700.0);
    let bad = with("7 bananas").unwrap_err();
    assert!(
        bad.contains("for '--params <COUNT>': `7 bananas` is not a parameter count"),
        "{bad}"
    );
}

#[test]
fn gpus_by_slug_with_did_you_mean_and_by_memory() {
    let base = ["--model", "llama-3.1-8b", "--weights", "bf16"];
    let named = size(&[&base[..], &["--gpu", "RTX 3090"]].concat()).unwrap();
    assert_eq!(named["target"]["name"], "RTX 3090");
    for slug in ["rtx-3090", "rtx3090", "Rtx 3090"] {
        let v = size(&[&base[..], &["--gpu", slug]].concat()).unwrap();
        assert_eq!(v["target"], named["target"], "{slug}");
    }
    // A card not in the list, by its memory: the RTX 3090 has 24576 MiB.
    for memory in ["24GiB", "24GB", "24576MiB"] {
        let v = size(&[&base[..], &["--gpu-memory", memory]].concat()).unwrap();
        assert_eq!(v["target"]["memory_gib"], 24.0, "{memory}");
        assert_eq!(
            v["target"]["headroom_gib"], named["target"]["headroom_gib"],
            "{memory}"
        );
    }
    let unknown = size(&[&base[..], &["--gpu", "rtx 3900"]].concat()).unwrap_err();
    assert!(
        unknown.contains("unknown GPU `rtx 3900`; did you mean `RTX 3090`"),
        "{unknown}"
    );
    for util in ["NaN", "1.5", "-0.5", "0"] {
        let flag = format!("--gpu-memory-utilization={util}");
        let error = size(&[&base[..], &[flag.as_str()]].concat()).unwrap_err();
        assert!(
            error.contains("must be more than 0 and at most 1"),
            "{util}: {error}"
        );
    }
    let unit = size(&[&base[..], &["--gpu-memory", "24"]].concat()).unwrap_err();
    assert!(unit.contains("needs a unit"), "{unit}");
}

#[test]
fn gpus_split_the_model_and_offload_says_how_many_layers() {
    let base = [
        "--model",
        "llama-3.1-70b",
        "--weights",
        "q4_k_m",
        "--runtime",
        "llama.cpp",
    ];
    let one = size(&[&base[..], &["--gpu", "rtx-4090"]].concat()).unwrap();
    let offload = &one["target"]["offload"];
    let ngl = offload["gpu_layers"].as_u64().unwrap();
    assert!(ngl > 0 && ngl < 81, "{one}");
    assert!(
        one["suggestions"]
            .as_array()
            .unwrap()
            .contains(&serde_json::json!(format!("-ngl {ngl}"))),
        "{one}"
    );
    let two = size(&[&base[..], &["--gpu", "rtx-4090", "--gpus", "2"]].concat()).unwrap();
    assert_eq!(two["gpus"], 2);
    assert_eq!(two["target"]["fits"], true, "{two}");
    assert!(two["weights_gib"].as_f64().unwrap() < one["weights_gib"].as_f64().unwrap() / 1.8);
    let ollama = size(&[
        "--model",
        "llama-3.1-70b",
        "--weights",
        "q4_k_m",
        "--runtime",
        "ollama",
        "--gpu",
        "RTX 4090",
    ])
    .unwrap();
    assert!(
        ollama["suggestions"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s.as_str().unwrap().starts_with("PARAMETER num_gpu ")),
        "{ollama}"
    );
}
