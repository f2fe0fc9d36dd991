//! The WebAssembly interface: no bindings generator, just linear memory.
//!
//! The page calls `reset()`, `alloc(len)` for the request, writes the UTF-8
//! request there, calls `handle(ptr, len)` and reads the answer at
//! `answer_ptr()` for `answer_len()` bytes. `reset()` frees everything at
//! once: a bump allocator is all one request at a time needs.

#![allow(
    unsafe_code,
    reason = "the wasm ABI needs a global allocator, a panic handler and raw request pointers"
)]

use alloc::string::String;
use core::alloc::{GlobalAlloc, Layout};
use core::cell::UnsafeCell;

const PAGE: usize = 65_536;

struct Bump {
    /// (start of the heap, next free byte)
    state: UnsafeCell<(usize, usize)>,
}

// SAFETY: wasm32-unknown-unknown is single-threaded.
unsafe impl Sync for Bump {}

unsafe extern "C" {
    static __heap_base: u8;
}

// SAFETY: allocations are carved from memory above `__heap_base`, grown with
// `memory.grow` as needed, and never overlap until `reset`, which the host
// calls only between requests.
unsafe impl GlobalAlloc for Bump {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let state = unsafe { &mut *self.state.get() };
        if state.0 == 0 {
            let base = core::ptr::addr_of!(__heap_base) as usize;
            *state = (base, base);
        }
        let start = state.1.next_multiple_of(layout.align());
        let end = start + layout.size();
        let have = core::arch::wasm32::memory_size(0) * PAGE;
        if end > have {
            let pages = (end - have).div_ceil(PAGE);
            if core::arch::wasm32::memory_grow(0, pages) == usize::MAX {
                return core::ptr::null_mut();
            }
        }
        state.1 = end;
        start as *mut u8
    }

    unsafe fn dealloc(&self, _ptr: *mut u8, _layout: Layout) {}
}

#[global_allocator]
static ALLOCATOR: Bump = Bump {
    state: UnsafeCell::new((0, 0)),
};

struct Answer(UnsafeCell<String>);
// SAFETY: single-threaded, as above.
unsafe impl Sync for Answer {}
static ANSWER: Answer = Answer(UnsafeCell::new(String::new()));

#[panic_handler]
fn panic(_: &core::panic::PanicInfo<'_>) -> ! {
    core::arch::wasm32::unreachable()
}

/// Frees every allocation; call before each request.
#[unsafe(no_mangle)]
pub extern "C" fn reset() {
    // SAFETY: the answer is dropped without deallocating, then the bump
    // pointer goes back to the heap start; nothing allocated is used after.
    unsafe {
        core::mem::forget(core::mem::take(&mut *ANSWER.0.get()));
        let state = &mut *ALLOCATOR.state.get();
        state.1 = state.0;
    }
}

/// Reserves `len` bytes for the request.
#[unsafe(no_mangle)]
pub extern "C" fn alloc(len: usize) -> *mut u8 {
    // SAFETY: align 1 and a non-zero size are a valid layout.
    unsafe { ALLOCATOR.alloc(Layout::from_size_align_unchecked(len.max(1), 1)) }
}

/// Answers the request of `len` bytes at `ptr` (see [`crate::handle`]).
#[unsafe(no_mangle)]
pub extern "C" fn handle(ptr: *const u8, len: usize) {
    // SAFETY: the host wrote `len` bytes at `ptr`, which `alloc` returned.
    let bytes = unsafe { core::slice::from_raw_parts(ptr, len) };
    let answer = match core::str::from_utf8(bytes) {
        Ok(request) => crate::handle(request),
        Err(_) => String::from("{\"error\":\"request is not UTF-8\"}"),
    };
    // SAFETY: single-threaded; the previous answer was taken by `reset`.
    unsafe { *ANSWER.0.get() = answer };
}

/// Where the last answer starts.
#[unsafe(no_mangle)]
pub extern "C" fn answer_ptr() -> *const u8 {
    // SAFETY: single-threaded read.
    unsafe { (&*ANSWER.0.get()).as_ptr() }
}

/// The last answer's length in bytes.
#[unsafe(no_mangle)]
pub extern "C" fn answer_len() -> usize {
    // SAFETY: single-threaded read.
    unsafe { (&*ANSWER.0.get()).len() }
}
