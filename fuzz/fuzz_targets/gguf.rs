//! GGUF headers are untrusted input: any bytes must give a header or an
//! error (never a panic, an overflow or a huge allocation), and any header
//! must give a model or an error.
#![no_main]

use errata::calculator::gguf;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    if let Ok(header) = gguf::parse(bytes) {
        assert!(header.data_start as usize >= header.tensors.len());
        let _ = gguf::model_of(&header);
    }
});
