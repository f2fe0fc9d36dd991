//! The link checker's target for the check tests: the shared route server
//! (`tests/support/link_server.rs`) with every behaviour the checker must
//! handle.

#[path = "../../support/link_server.rs"]
mod shared;

pub use shared::{LinkServer, Reply};

/// `/ok`; `/moved` (301 to `/ok`); `/nohead` (405 to HEAD, 200 to GET);
/// `/busy` (429 with `Retry-After: 1` the first time); `/slow` (3 s); 404
/// elsewhere.
pub fn checker_target() -> LinkServer {
    LinkServer::start(|method, path, earlier| match (path, method) {
        ("/ok", _) | ("/nohead", "GET") => Reply::status("200 OK"),
        ("/moved", _) => Reply::redirect("301 Moved Permanently", "/ok"),
        ("/nohead", "HEAD") => Reply::status("405 Method Not Allowed"),
        ("/busy", _) if earlier == 0 => Reply {
            headers: "Retry-After: 1\r\n".into(),
            ..Reply::status("429 Too Many Requests")
        },
        ("/busy", _) => Reply::status("200 OK"),
        ("/slow", _) => Reply {
            delay: std::time::Duration::from_secs(3),
            ..Reply::status("200 OK")
        },
        _ => Reply::status("404 Not Found"),
    })
}
