//! Network hardening: `errata check --external` against servers on
//! 127.0.0.1 (which links it follows, which addresses it refuses, how many
//! sockets it opens, what it prints), and `errata serve` under hostile and
//! heavy loopback traffic.
//!
//! - `check`: `errata check --external` and the link servers it meets;
//! - `serve`: `errata serve`'s hosts and origins, limits, time-outs and
//!   live-reload tabs.

#[path = "../support/copy_dir.rs"]
mod copy_dir_support;
#[path = "../support/link_server.rs"]
mod link_server;
#[path = "../support/serve_process.rs"]
mod serve_process;

mod check;
mod serve;

const REPO: &str = env!("CARGO_MANIFEST_DIR");
