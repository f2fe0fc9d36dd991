use crate::support::*;

#[test]
fn committed_wasm_gives_the_native_numbers_across_a_grid() {
    use sizing::Choice as _;
    let catalogue = errata::calculator::Catalogue::load(Path::new(REPO)).unwrap();
    let mut wasm = SizingWasm::load();
    let mut checked = 0;
    for model in [
        "llama-2-7b",
        "llama-3.1-8b",
        "llama-3.1-70b",
        "mixtral-8x7b",
        "gemma-2-9b",
        "qwen2.5-14b",
    ] {
        for (weights, runtime) in [
            ("bf16", "vllm"),
            ("fp16", "pytorch"),
            ("q4_k_m", "llama.cpp"),
            ("q8_0", "ollama"),
            ("awq", "vllm"),
        ] {
            for context in [512, 8192, 131_072] {
                for (kv, gpu) in [
                    ("f16", "RTX 4090"),
                    ("q8_0", "RTX 3060 12GB"),
                    ("fp8", "H100 80GB"),
                ] {
                    // Native code asks a typed question; the WebAssembly
                    // gets it as text and must give the same answer.
                    let preset = &catalogue.model(model).unwrap().model;
                    let mut input = sizing::Input {
                        weights: sizing::WeightFormat::named(weights).unwrap(),
                        runtime: sizing::Runtime::named(runtime).unwrap(),
                        context,
                        parallel: 2,
                        kv: sizing::KvType::named(kv).unwrap(),
                        flash_attention: context != 512,
                        ..catalogue.input(preset.clone())
                    };
                    input.validate().unwrap();
                    input.target_named(gpu).unwrap();
                    let native = sizing::write_answer(&input, &sizing::answer(&input));
                    let request = sizing::input_request(&input);
                    assert_eq!(wasm.handle(&request), native, "{request}");
                    checked += 1;
                }
            }
        }
    }
    assert_eq!(checked, 6 * 5 * 3 * 3);
    // Small enough to load with the page.
    let size = std::fs::metadata(Path::new(REPO).join(WASM)).unwrap().len();
    assert!(
        size < 64 * 1024,
        "sizing.wasm is {size} bytes; keep it under 64 KiB"
    );
    // Errors come back as JSON too.
    assert!(wasm.handle("layers=banana").contains("\"error\""));
}

#[test]
fn committed_wasm_matches_its_source() {
    if !wasm_support::target_installed() {
        missing_tool(
            "committed_wasm_matches_its_source",
            "the wasm32-unknown-unknown target is not installed",
            "it with `rustup target add wasm32-unknown-unknown`",
        );
        return;
    }
    let built = wasm_support::build(Path::new(REPO), "sizing");
    let committed = std::fs::read(Path::new(REPO).join(WASM)).unwrap();
    assert!(
        built == committed,
        "{WASM} is stale: run crates/sizing/build-wasm.sh and commit the result"
    );
}

#[test]
fn the_calculator_in_the_browser_matches_errata_size() {
    let Some(browser) = Browser::start("the_calculator_in_the_browser_matches_errata_size") else {
        return;
    };
    // The fixture's page that starts as a dense model on PyTorch.
    let site = Fixture::new("calculator");
    site.build().unwrap();
    let server = StaticServer::start(site.root().join("public"), "/");
    let page = format!("{}/gpus/dense/", server.origin());
    browser.call("POST", "/url", serde_json::json!({ "url": page }));
    browser.wait_for("return document.querySelector('.calc-form').getAttribute('data-ready')");

    let read = || {
        browser.script(
            "var o = {}; document.querySelectorAll('.calculator [data-out]').forEach(function (e) { o[e.getAttribute('data-out')] = e.textContent; }); return o;",
        )
    };
    // `errata size` over the fixture's data; the form's GPU is the page's
    // default, RTX 4090.
    let size = |args: &[&str]| {
        let mut all = vec!["size", "--format", "json"];
        all.extend(args);
        all.extend(["--gpu", "RTX 4090"]);
        let output = errata_cmd(site.root(), &all);
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        serde_json::from_slice::<serde_json::Value>(&output.stdout).unwrap()
    };
    let compare = |shown: &serde_json::Value, expected: &serde_json::Value| {
        for key in [
            "weights_gib",
            "kv_cache_gib",
            "compute_gib",
            "overhead_gib",
            "total_gib",
        ] {
            let shown: f64 = shown[key].as_str().unwrap().parse().unwrap();
            assert_eq!(shown, expected[key].as_f64().unwrap(), "{key}");
        }
        assert_eq!(
            shown["kv_tokens"].as_str().unwrap(),
            expected["kv_tokens"].to_string()
        );
        assert_eq!(shown["verdict"].as_str().unwrap(), verdict(expected));
    };

    // The page's starting state (front matter: llama-3.1-8b, fp16, 8192 tokens).
    compare(
        &read(),
        &size(&[
            "--model",
            "llama-3.1-8b",
            "--weights",
            "fp16",
            "--context",
            "8192",
        ]),
    );

    // Change the model and the context the way a user does: pick an option, type a number.
    browser.click("select[name=model] option[value='qwen2.5-14b']");
    browser.replace_text("input[name=context]", "32768");
    browser
        .wait_for("return document.querySelector('[data-out=kv_tokens]').textContent === '32768'");
    let shown = read();
    let expected = size(&[
        "--model",
        "qwen2.5-14b",
        "--weights",
        "fp16",
        "--context",
        "32768",
    ]);
    compare(&shown, &expected);
    assert!(shown["verdict"].as_str().unwrap().contains("RTX 4090"));

    // The state is in the URL hash, and loading that URL restores it.
    let hash = browser
        .script("return window.location.hash")
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        hash.contains("qwen2.5-14b") && hash.contains("32768"),
        "{hash}"
    );
    browser.call("POST", "/url", serde_json::json!({"url": "about:blank"}));
    browser.call(
        "POST",
        "/url",
        serde_json::json!({ "url": format!("{page}{hash}") }),
    );
    browser.wait_for("return document.querySelector('.calc-form').getAttribute('data-ready')");
    compare(&read(), &expected);

    // A mixture-of-experts preset split over two GPUs: per-GPU figures agree too.
    browser.click("select[name=model] option[value='mixtral-8x7b']");
    browser.replace_text("input[name=gpus]", "2");
    let expected = size(&[
        "--model",
        "mixtral-8x7b",
        "--weights",
        "fp16",
        "--context",
        "32768",
        "--gpus",
        "2",
    ]);
    browser.wait_for(&format!(
        "return document.querySelector('[data-out=weights_gib]').textContent === '{:.2}'",
        expected["weights_gib"].as_f64().unwrap()
    ));
    compare(&read(), &expected);
}

/// The verdict for `errata size`'s JSON answer, word for word as the
/// page's script writes it (numbers as JavaScript prints them: 12, not 12.0).
fn verdict(expected: &serde_json::Value) -> String {
    let t = &expected["target"];
    let n = |v: &serde_json::Value| v.as_f64().unwrap().to_string();
    let name = t["name"].as_str().unwrap();
    if t["fits"] == true {
        return format!(
            "Fits on {name} with {} GiB to spare.",
            n(&t["headroom_gib"])
        );
    }
    let mut v = format!("Does not fit on {name} ({} GiB).", n(&t["memory_gib"]));
    if let Some(o) = t["offload"].as_object() {
        v += &format!(
            " Offload: {} of {} layers on the GPU, {} GiB in system RAM.",
            o["gpu_layers"],
            o["all_layers"],
            n(&o["ram_gib"])
        );
    }
    v
}

#[test]
fn the_no_js_result_is_what_errata_size_prints() {
    // Each page's calculator is computed at build time; without JavaScript
    // the reader sees those figures, which must be what `errata size`
    // prints for the state the form shows. The fixture's pages start in
    // different states: a dense model, an MoE model offloaded by llama.cpp,
    // a 70B model too large for vLLM on one card, gpt-oss on Ollama with
    // its GPU named by slug.
    let site = Fixture::new("calculator");
    site.build().unwrap();
    let mut checked = 0;
    for entry in walkdir::WalkDir::new(site.root().join("public")) {
        let entry = entry.unwrap();
        if entry.file_name() != "index.html" {
            continue;
        }
        let html = std::fs::read_to_string(entry.path()).unwrap();
        let doc = Html::parse_document(&html);
        if select(&doc, ".calc-form").is_empty() {
            continue;
        }
        let attr = |css: &str, name: &str| -> String {
            let found = select(&doc, css);
            let element = found.first().unwrap_or_else(|| panic!("{css}"));
            element.value().attr(name).unwrap_or("").to_string()
        };
        let text = |name: &str| -> String {
            select(&doc, &format!("[data-out={name}]"))[0]
                .text()
                .collect::<String>()
        };
        let state = [
            (
                "--model",
                attr("select[name=model] option[selected]", "value"),
            ),
            (
                "--weights",
                attr("select[name=weights] option[selected]", "value"),
            ),
            (
                "--runtime",
                attr("select[name=runtime] option[selected]", "value"),
            ),
            (
                "--kv-cache",
                attr("select[name=kv] option[selected]", "value"),
            ),
            ("--context", attr("input[name=context]", "value")),
            ("--gpu", attr("input[name=gpu]", "value")),
        ];
        let args: Vec<&str> = state
            .iter()
            .flat_map(|(flag, value)| [*flag, value.as_str()])
            .collect();
        let mut command = vec!["size", "--format", "json"];
        command.extend(args);
        let output = errata_cmd(site.root(), &command);
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        let expected: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
        let page = entry.path().display();
        for key in [
            "weights_gib",
            "kv_cache_gib",
            "compute_gib",
            "overhead_gib",
            "total_gib",
        ] {
            let figure = format!("{:.2}", expected[key].as_f64().unwrap());
            assert_eq!(text(key), figure, "{page}: {key}");
        }
        assert_eq!(
            text("kv_tokens"),
            expected["kv_tokens"].to_string(),
            "{page}"
        );
        let verdict = verdict(&expected);
        assert_eq!(text("verdict"), verdict, "{page}");
        let max = match expected["max_context"].as_u64() {
            Some(n) => format!("{n} tokens"),
            None => "none".to_string(),
        };
        assert_eq!(text("max_context"), max, "{page}");
        let fits: Vec<&str> = expected["fits"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["gpu"].as_str().unwrap())
            .collect();
        let fits = if fits.is_empty() {
            "none of the catalogue".to_string()
        } else {
            fits.join(", ")
        };
        assert_eq!(text("fits"), fits, "{page}");
        let suggestions: Vec<String> = select(&doc, "[data-out=suggestions] li")
            .iter()
            .map(|li| li.text().collect())
            .collect();
        assert_eq!(
            serde_json::json!(suggestions),
            expected["suggestions"],
            "{page}"
        );
        checked += 1;
    }
    assert_eq!(checked, 4, "pages with a calculator");
}

#[test]
fn errata_size_rejects_bad_input_with_exit_code_1() {
    let run = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_errata"))
            .args(["size", "--root", REPO])
            .args(args)
            .output()
            .unwrap()
    };
    for (args, message) in [
        (&["--model", "gpt-9"][..], "unknown model `gpt-9`"),
        (
            &["--model", "llama-3.1-8b", "--context", "10000001"][..],
            "between 1 and 10000000",
        ),
        (
            &["--model", "llama-3.1-8b", "--context", "0"][..],
            "between 1 and 10000000",
        ),
        (
            &[
                "--params", "0", "--layers", "32", "--hidden", "4096", "--heads", "32", "--vocab",
                "32000",
            ][..],
            "for '--params <COUNT>': `0` is not a parameter count: it must be at least 1",
        ),
        (
            &["--model", "llama-3.1-8b", "--gpu", "Voodoo 2"][..],
            "unknown GPU `Voodoo 2`",
        ),
        (
            &["--model", "llama-3.1-8b", "--weights", "q1_magic"][..],
            "invalid value 'q1_magic' for '--weights <FORMAT>'",
        ),
    ] {
        let out = run(args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(message), "{args:?}: {stderr}");
    }
    // A negative size is refused by the argument parser, also with a message.
    let out = run(&["--model", "llama-3.1-8b", "--context", "-5"]);
    assert_ne!(out.status.code(), Some(0));
    // Custom architectures work without a preset, and --gpu gives max_context.
    let out = run(&[
        "--params",
        "8030261248",
        "--layers",
        "32",
        "--hidden",
        "4096",
        "--heads",
        "32",
        "--kv-heads",
        "8",
        "--vocab",
        "128256",
        "--weights",
        "bf16",
        "--gpu",
        "H100 80GB",
        "--format",
        "json",
    ]);
    assert!(out.status.success());
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["weights_gib"], 14.96);
    assert!(json["max_context"].as_u64().unwrap() > 100_000);
    assert!(
        json["fits"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["gpu"] == "H100 80GB")
    );
}
