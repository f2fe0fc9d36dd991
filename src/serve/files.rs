//! What `errata serve` serves: a small interface over the built site, so the
//! server does not care whether the files are in memory ([`Live`], what
//! `errata serve` uses) or in a folder ([`Folder`]), plus the mapping from
//! request paths to site paths, content types and the live-reload injection.

use std::path::{Component, Path, PathBuf};

use bytes::Bytes;

use crate::write::MemorySite;

/// The built site, as the server reads it.
pub trait SiteFiles: Send + Sync {
    /// The file at `path`: `/`-separated plain segments relative to the
    /// site root (never `..`, never absolute), or `None` when there is no
    /// such file (a folder is not a file).
    fn read(&self, path: &str) -> Option<Bytes>;
}

/// A site in a folder on disk.
#[derive(Debug, Clone)]
pub struct Folder(pub PathBuf);

impl SiteFiles for Folder {
    fn read(&self, path: &str) -> Option<Bytes> {
        let file = self.0.join(path);
        if !file.is_file() {
            return None;
        }
        std::fs::read(file).ok().map(Bytes::from)
    }
}

impl<T: SiteFiles + ?Sized> SiteFiles for std::sync::Arc<T> {
    fn read(&self, path: &str) -> Option<Bytes> {
        (**self).read(path)
    }
}

impl SiteFiles for MemorySite {
    fn read(&self, path: &str) -> Option<Bytes> {
        self.get(path).cloned()
    }
}

/// A site in memory that a rebuild replaces in one step: requests see the
/// old site or the new one, never a mix.
#[derive(Debug, Default)]
pub struct Live(std::sync::RwLock<std::sync::Arc<MemorySite>>);

impl Live {
    /// Serves `files` from now on. The old site is freed after the lock
    /// is released, on a thread of its own, so no request waits for that.
    pub fn replace(&self, files: std::sync::Arc<MemorySite>) {
        let old = std::mem::replace(
            &mut *self.0.write().unwrap_or_else(|e| e.into_inner()),
            files,
        );
        crate::pipeline::drop_later(old);
    }
}

impl SiteFiles for Live {
    fn read(&self, path: &str) -> Option<Bytes> {
        let files = std::sync::Arc::clone(&self.0.read().unwrap_or_else(|e| e.into_inner()));
        files.get(path).cloned()
    }
}

/// The site path a request path names (`/oom/` → `oom/`, `/a%20b.txt` →
/// `a b.txt`), or `None` when it is not a plain path inside the site
/// (`..`, encoded or not, backslashes, NUL, malformed escapes).
pub fn site_path(request_path: &str) -> Option<String> {
    let decoded = crate::links::percent_decode(request_path)?;
    if decoded.contains(['\\', '\0']) {
        return None;
    }
    let mut segments = Vec::new();
    for segment in decoded.split('/') {
        match segment {
            "" | "." => {}
            ".." => return None,
            s => {
                let mut components = Path::new(s).components();
                if !matches!(
                    (components.next(), components.next()),
                    (Some(Component::Normal(_)), None)
                ) {
                    return None;
                }
                segments.push(s);
            }
        }
    }
    let mut path = segments.join("/");
    if decoded.ends_with('/') && !path.is_empty() {
        path.push('/');
    }
    Some(path)
}

/// The file to serve for a site path: the path itself, or the folder's
/// `index.html`; with the name it was found under.
pub fn find(files: &dyn SiteFiles, path: &str) -> Option<(String, Bytes)> {
    if !path.is_empty()
        && !path.ends_with('/')
        && let Some(bytes) = files.read(path)
    {
        return Some((path.to_string(), bytes));
    }
    let index = format!(
        "{}{}index.html",
        path,
        if path.is_empty() || path.ends_with('/') {
            ""
        } else {
            "/"
        }
    );
    files.read(&index).map(|bytes| (index, bytes))
}

/// Maps a request path to a file inside `dir`, or `None` when the path is
/// not a plain path inside it.
pub fn resolve(dir: &Path, request_path: &str) -> Option<PathBuf> {
    let path = dir.join(site_path(request_path)?);
    Some(if path.is_dir() {
        path.join("index.html")
    } else {
        path
    })
}

/// The `Content-Type` for a file name.
pub fn content_type(name: &str) -> &'static str {
    match Path::new(name)
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or("")
    {
        "html" => "text/html; charset=utf-8",
        "css" => "text/css; charset=utf-8",
        "js" => "text/javascript; charset=utf-8",
        "json" => "application/json",
        "xml" => "application/xml",
        "txt" => "text/plain; charset=utf-8",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "webp" => "image/webp",
        "ico" => "image/x-icon",
        "wasm" => "application/wasm",
        "woff2" => "font/woff2",
        _ => "application/octet-stream",
    }
}

/// The script that reloads the page when the server says so, and the error
/// overlay when the last build failed.
pub fn injection(error: Option<&str>) -> String {
    let mut out = String::from(
        "<script>(function(){var p=location.protocol==='https:'?'wss://':'ws://';\
         function c(){var s=new WebSocket(p+location.host+'/__errata/livereload');\
         s.onmessage=function(e){if(e.data==='reload')location.reload();};\
         s.onclose=function(){setTimeout(c,1000);};}c();})();</script>",
    );
    if let Some(error) = error {
        let mut escaped = String::new();
        crate::escape::html_into(error, &mut escaped);
        out.push_str(
            "<div id=\"errata-overlay\" role=\"alert\" style=\"position:fixed;inset:auto 0 0 0;max-height:60vh;overflow:auto;\
             z-index:2147483647;background:#1b1f24;color:#ffdcd7;border-top:4px solid #cf222e;padding:1rem;\
             font:14px/1.5 ui-monospace,monospace\"><strong>errata: the build failed; showing the last good version</strong><pre style=\"white-space:pre-wrap;margin:.5rem 0 0\">",
        );
        out.push_str(&escaped);
        out.push_str("</pre></div>");
    }
    out
}

/// `html` with `extra` inserted before its last `</body>` (or at the end).
pub fn inject(html: &[u8], extra: &str) -> Vec<u8> {
    let at = html
        .windows(7)
        .rposition(|w| w.eq_ignore_ascii_case(b"</body>"))
        .unwrap_or(html.len());
    let mut out = Vec::with_capacity(html.len() + extra.len());
    out.extend_from_slice(&html[..at]);
    out.extend_from_slice(extra.as_bytes());
    out.extend_from_slice(&html[at..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolve_stays_inside_the_served_folder() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("oom")).unwrap();
        assert_eq!(
            resolve(dir.path(), "/oom/").unwrap(),
            dir.path().join("oom/index.html")
        );
        assert_eq!(
            resolve(dir.path(), "/a%20b.txt").unwrap(),
            dir.path().join("a b.txt")
        );
        for bad in [
            "/../etc/passwd",
            "/%2e%2e/etc/passwd",
            "/oom/%2E%2E/%2e%2e/x",
            "/a\\..\\b",
            "/%00",
            "/%zz",
            "/%2e%2e%2fetc",
        ] {
            assert!(resolve(dir.path(), bad).is_none(), "{bad}");
        }
    }

    #[test]
    fn a_map_serves_like_a_folder() {
        use crate::write::{Memory, Store};
        let memory = Memory::default();
        memory.write("index.html", b"home").unwrap();
        memory.write("oom/index.html", b"oom").unwrap();
        memory.write("app.wasm", b"\0asm").unwrap();
        let map = memory.into_site();
        let found = |p: &str| find(&map, &site_path(p).unwrap()).map(|(name, _)| name);
        assert_eq!(found("/").as_deref(), Some("index.html"));
        assert_eq!(found("/oom/").as_deref(), Some("oom/index.html"));
        assert_eq!(found("/oom").as_deref(), Some("oom/index.html"));
        assert_eq!(found("/app.wasm").as_deref(), Some("app.wasm"));
        assert_eq!(found("/nope/"), None);
        assert_eq!(content_type("app.wasm"), "application/wasm");
    }

    #[test]
    fn overlay_escapes_the_errors() {
        let html = injection(Some("content/a.md:1:1: <script>x</script>"));
        assert!(html.contains("&lt;script&gt;x&lt;/script&gt;"));
        assert!(html.contains("errata-overlay"));
        assert!(!injection(None).contains("errata-overlay"));
        assert_eq!(inject(b"<p>a</p></BODY>", "X"), b"<p>a</p>X</BODY>");
    }
}
