//! Link settings for the `errata` executable.
//!
//! On Linux with glibc the executable is linked as a fixed-address
//! (non-PIE) program: its 11 MB of read-only tables that hold pointers are
//! then used as mapped from the file. As a position-independent executable
//! the dynamic loader had to rewrite them (some 88,000 relocations, a
//! copy-on-write of every page) at every start: 150-400 ms per command on
//! the 2-core machine this project is measured on, more than a warm
//! rebuild of 10,000 pages takes otherwise. Shared libraries, the stack
//! and the heap are still placed at random addresses.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let target = std::env::var("TARGET").unwrap_or_default();
    if target.ends_with("linux-gnu") {
        println!("cargo:rustc-link-arg-bins=-no-pie");
    }
}
