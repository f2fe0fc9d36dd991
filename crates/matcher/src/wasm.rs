//! The WebAssembly interface: no bindings generator, just linear memory.
//!
//! The page (in a Worker) calls `alloc(len)`, writes bytes there and passes
//! them on, then `dealloc(ptr, len)`:
//!
//! - `load(ptr, len)`: the match index JSON; 0 when it compiled, else 1 and
//!   the message is the answer;
//! - `begin()`, then `feed(ptr, len)` for each chunk of the log, then
//!   `finish()`: the answer is `{"matches":[...]}`, exactly what
//!   [`crate::to_json`] gives natively;
//! - `answer_ptr()` and `answer_len()` locate the last answer.
//!
//! The allocator is the standard library's, so the compiled matcher stays
//! alive between requests.

#![allow(
    unsafe_code,
    reason = "the wasm ABI passes raw pointers into linear memory"
)]

use std::cell::RefCell;

use crate::{Matcher, Scan};

thread_local! {
    static MATCHER: RefCell<Option<Matcher>> = const { RefCell::new(None) };
    static SCAN: RefCell<Option<Scan>> = const { RefCell::new(None) };
    static ANSWER: RefCell<String> = const { RefCell::new(String::new()) };
}

fn answer(text: String) {
    ANSWER.with(|a| *a.borrow_mut() = text);
}

/// The `len` bytes at `ptr`, which `alloc` returned and the host filled.
fn bytes<'a>(ptr: *const u8, len: usize) -> &'a [u8] {
    if len == 0 {
        return &[];
    }
    // SAFETY: the host wrote `len` bytes at `ptr`, an allocation from `alloc`
    // that lives until it calls `dealloc`.
    unsafe { core::slice::from_raw_parts(ptr, len) }
}

/// Reserves `len` bytes for the host to write into.
#[unsafe(no_mangle)]
pub extern "C" fn alloc(len: usize) -> *mut u8 {
    let mut buffer = Vec::<u8>::with_capacity(len.max(1));
    let ptr = buffer.as_mut_ptr();
    core::mem::forget(buffer);
    ptr
}

/// Frees what `alloc(len)` returned.
#[unsafe(no_mangle)]
pub extern "C" fn dealloc(ptr: *mut u8, len: usize) {
    // SAFETY: `ptr` came from `alloc(len)`, whose capacity is `len.max(1)`.
    drop(unsafe { Vec::from_raw_parts(ptr, 0, len.max(1)) });
}

/// Compiles the match index; 0 on success, 1 with the message as the answer.
#[unsafe(no_mangle)]
pub extern "C" fn load(ptr: *const u8, len: usize) -> u32 {
    let result = core::str::from_utf8(bytes(ptr, len))
        .map_err(|_| "the match index is not UTF-8".to_string())
        .and_then(Matcher::from_json);
    match result {
        Ok(matcher) => {
            MATCHER.with(|m| *m.borrow_mut() = Some(matcher));
            answer(String::new());
            0
        }
        Err(message) => {
            answer(message);
            1
        }
    }
}

/// Starts a log.
#[unsafe(no_mangle)]
pub extern "C" fn begin() {
    let scan = MATCHER.with(|m| m.borrow().as_ref().map(Matcher::scan));
    SCAN.with(|s| *s.borrow_mut() = scan);
}

/// Feeds the next chunk of the log.
#[unsafe(no_mangle)]
pub extern "C" fn feed(ptr: *const u8, len: usize) {
    MATCHER.with(|m| {
        SCAN.with(|s| {
            if let (Some(matcher), Some(scan)) = (m.borrow().as_ref(), s.borrow_mut().as_mut()) {
                matcher.feed(scan, bytes(ptr, len));
            }
        })
    });
}

/// Ends the log; the answer is the ranked matches as JSON.
#[unsafe(no_mangle)]
pub extern "C" fn finish() {
    let scan = SCAN.with(|s| s.borrow_mut().take());
    let text = MATCHER.with(|m| match (m.borrow().as_ref(), scan) {
        (Some(matcher), Some(scan)) => crate::to_json(&matcher.finish(scan)),
        _ => String::from("{\"error\":\"load the index and call begin first\"}"),
    });
    answer(text);
}

/// Where the last answer starts.
#[unsafe(no_mangle)]
pub extern "C" fn answer_ptr() -> *const u8 {
    ANSWER.with(|a| a.borrow().as_ptr())
}

/// The last answer's length in bytes.
#[unsafe(no_mangle)]
pub extern "C" fn answer_len() -> usize {
    ANSWER.with(|a| a.borrow().len())
}
