//! The sizing crate's text interface, as the page's WebAssembly calls it:
//! any request must get a JSON answer (or a JSON error), never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|request: &str| {
    let answer = sizing::handle(request);
    assert!(
        answer.starts_with('{') && answer.ends_with('}'),
        "not a JSON object: {answer}"
    );
});
