//! The JSON answer, written by hand (no serde in the WebAssembly).

use alloc::format;
use alloc::string::String;
use core::fmt::Write as _;

use crate::answer::{Answer, answer};
use crate::choice::Choice as _;
use crate::input::Input;
use crate::{GIB, MIB};

/// `bytes` in GiB with two decimals. Written by hand: float formatting
/// would more than double the size of the WebAssembly.
pub(crate) fn gib(bytes: f64) -> String {
    fixed2(bytes / GIB)
}

/// `value` with two decimals, by hand (see [`gib`]).
pub(crate) fn fixed2(value: f64) -> String {
    let hundredths = value * 100.0;
    let rounded = if hundredths >= 0.0 {
        (hundredths + 0.5) as i64
    } else {
        (hundredths - 0.5) as i64
    };
    let sign = if rounded < 0 { "-" } else { "" };
    let abs = rounded.unsigned_abs();
    format!("{sign}{}.{}{}", abs / 100, abs / 10 % 10, abs % 10)
}

pub(crate) fn json_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '<' => out.push_str("\\u003c"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// The answer to a request as JSON (the schema of `errata size --format json`):
/// GiB figures as numbers with two decimals, the GPUs it fits on, the largest
/// context for the target GPU, and suggestions.
pub fn answer_json(input: &Input) -> String {
    write_answer(input, &answer(input))
}

/// Writes `a`, the answer to `input`, as JSON.
pub fn write_answer(input: &Input, a: &Answer) -> String {
    let b = &a.breakdown;
    let mut out = String::with_capacity(512);
    out.push('{');
    let _ = write!(
        out,
        "\"weights_gib\":{},\"kv_cache_gib\":{},\"compute_gib\":{},\"overhead_gib\":{},\"total_gib\":{},\"kv_tokens\":{}",
        gib(b.weights),
        gib(b.kv_cache),
        gib(b.compute),
        gib(b.overhead),
        gib(b.total()),
        b.kv_tokens
    );
    let _ = write!(
        out,
        ",\"params_b\":{},\"active_params_b\":{},\"bits_per_weight\":{}",
        fixed2(a.params / 1e9),
        fixed2(a.active_params / 1e9),
        fixed2(a.bits_per_weight)
    );
    out.push_str(",\"runtime\":");
    json_string(&mut out, input.runtime.name());
    out.push_str(",\"weights\":");
    json_string(&mut out, input.weights.name());
    out.push_str(",\"kv_type\":");
    json_string(&mut out, input.kv.name());
    let _ = write!(out, ",\"context\":{}", input.context);
    let _ = write!(
        out,
        ",\"gpus\":{},\"model_gib\":{},\"replicated_gib\":{},\"host_gib\":{}",
        input.tensor_parallel.max(1),
        gib(b.model),
        gib(b.replicated),
        gib(b.host)
    );
    out.push_str(",\"target\":");
    match &a.target {
        Some(t) => {
            let gpu = &input.gpus[t.gpu];
            out.push_str("{\"name\":");
            json_string(&mut out, &gpu.name);
            let _ = write!(
                out,
                ",\"memory_gib\":{},\"fits\":{},\"headroom_gib\":{}",
                gib(gpu.memory_mib * MIB),
                t.fits(),
                gib(t.headroom)
            );
            out.push_str(",\"offload\":");
            match &t.offload {
                Some(o) => {
                    let _ = write!(
                        out,
                        "{{\"gpu_layers\":{},\"all_layers\":{},\"gpu_gib\":{},\"ram_gib\":{}}}}}",
                        o.gpu_layers,
                        o.all_layers,
                        gib(o.gpu),
                        gib(o.host)
                    );
                }
                None => out.push_str("null}"),
            }
        }
        None => out.push_str("null"),
    }
    out.push_str(",\"fits\":[");
    for (n, fit) in a.fits.iter().enumerate() {
        if n > 0 {
            out.push(',');
        }
        let gpu = &input.gpus[fit.gpu];
        out.push_str("{\"gpu\":");
        json_string(&mut out, &gpu.name);
        let _ = write!(
            out,
            ",\"memory_gib\":{},\"headroom_gib\":{}}}",
            gib(gpu.memory_mib * MIB),
            gib(fit.headroom)
        );
    }
    out.push_str("],\"max_context\":");
    match a.max_context {
        Some(n) => {
            let _ = write!(out, "{n}");
        }
        None => out.push_str("null"),
    }
    out.push_str(",\"suggestions\":[");
    for (n, s) in a.suggestions.iter().enumerate() {
        if n > 0 {
            out.push(',');
        }
        json_string(&mut out, s);
    }
    out.push_str("]}");
    out
}

/// `{"error": message}`.
pub(crate) fn error(message: &str) -> String {
    let mut out = String::from("{\"error\":");
    json_string(&mut out, message);
    out.push('}');
    out
}
