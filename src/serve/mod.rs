//! `errata serve`: builds the site into memory (the build's pipeline and
//! sink, over an in-memory store), serves it on 127.0.0.1, rebuilds when
//! sources change, and tells open tabs to reload over a WebSocket on the
//! same port. A failed rebuild keeps the last good site and shows the
//! errors in an overlay and in the terminal. Each build starts from what
//! the last one left in memory (a [`Session`]), so a rebuild reads, parses
//! and renders only what changed. Nothing is written to disk but the probe
//! file the source snapshot reads the file system's time from
//! (`.errata/sources.probe`).
//!
//! [`http`] is the server (hyper, with the limits a preview server owes a
//! developer's machine), [`livereload`] the WebSocket, and [`files`] what
//! is served: anything behind the [`SiteFiles`] interface (the site in
//! memory, [`Live`]).

pub mod files;
pub mod http;
mod livereload;

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use notify::{RecursiveMode, Watcher};

use crate::pipeline::{BuildError, BuildOptions, Session, build_in_session};

pub use files::{Folder, Live, SiteFiles, resolve};
pub use http::{Limits, Server};

/// The path the live-reload WebSocket listens on.
pub const LIVE_RELOAD_PATH: &str = "/__errata/livereload";

/// What `errata serve` was asked to do.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    /// The site root.
    pub root: PathBuf,
    /// Port on 127.0.0.1.
    pub port: u16,
    /// Include drafts.
    pub drafts: bool,
    /// Open the site in the default browser once it is up.
    pub open: bool,
    /// Print the time each stage took after every build.
    pub timings: bool,
}

/// The build's outcome as text for the terminal and the overlay.
fn describe(
    result: &Result<crate::BuildReport, BuildError>,
    timings: bool,
) -> Result<String, String> {
    match result {
        Ok(report) => {
            let mut summary = format!(
                "Built {} page(s) ({} from cache) in {} ms",
                report.pages,
                report.cached_pages,
                report.total.as_millis()
            );
            if timings {
                summary.push('\n');
                summary.push_str(report.timings_table().trim_end());
            }
            Ok(summary)
        }
        Err(BuildError::Diagnostics(all)) => Err(all
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("\n")),
        Err(other) => Err(other.to_string()),
    }
}

/// Runs the server until Ctrl-C. Returns an error if it cannot start.
pub fn serve(options: &ServeOptions) -> Result<(), String> {
    let listener = TcpListener::bind(("127.0.0.1", options.port))
        .map_err(|e| format!("cannot listen on 127.0.0.1:{}: {e}", options.port))?;
    let port = listener.local_addr().map_err(|e| e.to_string())?.port();
    let base_url = format!("http://127.0.0.1:{port}/");
    let build_options = BuildOptions {
        root: options.root.clone(),
        output: None,
        base_url: Some(base_url.clone()),
        drafts: options.drafts,
        force: false,
        clean: false,
        progress: None,
    };

    // Ctrl-C waits for a build in progress and leaves.
    let stopping = Arc::new(AtomicBool::new(false));
    let building = Arc::new(Mutex::new(()));
    let stop_flag = Arc::clone(&stopping);
    let build_lock = Arc::clone(&building);
    ctrlc::set_handler(move || {
        stop_flag.store(true, Ordering::SeqCst);
        let _no_more_builds = build_lock.lock().unwrap_or_else(|e| e.into_inner());
        println!("\nStopped");
        std::process::exit(0);
    })
    .map_err(|e| format!("cannot handle Ctrl-C: {e}"))?;

    let site = Arc::new(Live::default());
    let server = Server::start(listener, Arc::clone(&site), Limits::default())
        .map_err(|e| format!("cannot start the server: {e}"))?;
    // Watch before the first build, so no edit between the two is missed.
    let (tx, rx) = std::sync::mpsc::channel::<notify::Result<notify::Event>>();
    let mut watcher =
        notify::recommended_watcher(tx).map_err(|e| format!("cannot watch files: {e}"))?;
    // The root itself, without its subfolders: it sees `site.toml` replaced
    // (editors save by renaming) and a source folder made, or made again,
    // after serve started, which is then watched in full.
    // Events name absolute paths (inotify joins a relative one to the
    // working folder, FSEvents resolves symlinks): the root they are
    // compared with is the resolved one, whatever `--root` said (`.`).
    let root = std::fs::canonicalize(&options.root)
        .map_err(|e| format!("cannot watch {}: {e}", options.root.display()))?;
    watcher
        .watch(&root, RecursiveMode::NonRecursive)
        .map_err(|e| format!("cannot watch {}: {e}", root.display()))?;
    for name in SOURCE_FOLDERS {
        let path = root.join(name);
        if path.is_dir() {
            watcher
                .watch(&path, RecursiveMode::Recursive)
                .map_err(|e| format!("cannot watch {}: {e}", path.display()))?;
        }
    }
    let mut builder = Builder {
        options: build_options,
        timings: options.timings,
        session: Session::default(),
    };
    builder.rebuild(&site, &server, &building, &stopping);
    println!(
        "Serving {} from memory at {base_url} (Ctrl-C to stop)",
        options.root.display()
    );
    if options.open {
        open_browser(&base_url);
    }

    while let Ok(event) = rx.recv() {
        if stopping.load(Ordering::SeqCst) {
            break;
        }
        let Ok(event) = event else { continue };
        if !is_source_change(&event) || !in_sources(&root, &event) {
            continue;
        }
        for folder in made_folders(&root, &event) {
            if let Err(e) = watcher.watch(&folder, RecursiveMode::Recursive) {
                eprintln!("warning: cannot watch {}: {e}", folder.display());
            }
        }
        // Debounce: an editor's save is several events (write, rename,
        // attributes), a few milliseconds apart; wait for 20 ms of quiet.
        while rx.recv_timeout(Duration::from_millis(20)).is_ok() {}
        builder.rebuild(&site, &server, &building, &stopping);
        server.reload();
    }
    Ok(())
}

/// The site's source folders under its root; `site.toml` is the other
/// source.
const SOURCE_FOLDERS: [&str; 5] = ["content", "data", "themes", "templates", "static"];

/// True when `event` touches `site.toml` or something in a source folder
/// (the root's own watch also reports other files there).
fn in_sources(root: &Path, event: &notify::Event) -> bool {
    event.paths.iter().any(|p| {
        let first = p
            .strip_prefix(root)
            .ok()
            .and_then(|rel| rel.components().next());
        first.is_some_and(|c| {
            let name = c.as_os_str();
            name == crate::config::CONFIG_FILE || SOURCE_FOLDERS.iter().any(|f| name == *f)
        })
    })
}

/// Source folders `event` made at the root (created, or moved there).
fn made_folders(root: &Path, event: &notify::Event) -> Vec<PathBuf> {
    use notify::EventKind;
    use notify::event::{ModifyKind, RenameMode};
    let made = matches!(
        event.kind,
        EventKind::Create(_)
            | EventKind::Modify(ModifyKind::Name(
                RenameMode::To | RenameMode::Both | RenameMode::Any
            ))
    );
    if !made {
        return Vec::new();
    }
    event
        .paths
        .iter()
        .filter(|p| {
            p.parent() == Some(root)
                && p.is_dir()
                && p.file_name()
                    .is_some_and(|n| SOURCE_FOLDERS.iter().any(|f| n == *f))
        })
        .cloned()
        .collect()
}

/// True for events that change a source: not reads or metadata changes (the
/// build itself reads every source), and not editors' swap and backup files.
fn is_source_change(event: &notify::Event) -> bool {
    use notify::EventKind;
    use notify::event::ModifyKind;
    // Metadata changes are not edits: the build's own first read of a freshly
    // written file updates its access time, which must not trigger a rebuild.
    let kind = matches!(
        event.kind,
        EventKind::Create(_)
            | EventKind::Remove(_)
            | EventKind::Modify(
                ModifyKind::Data(_) | ModifyKind::Name(_) | ModifyKind::Any | ModifyKind::Other
            )
    );
    kind && event.paths.iter().any(|p| {
        let name = p
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        !(name.starts_with('.')
            || name.ends_with('~')
            || name.ends_with(".swp")
            || name.ends_with(".tmp"))
    })
}

/// Builds the site again and again, each build after the last (see
/// [`Session`]).
struct Builder {
    options: BuildOptions,
    timings: bool,
    session: Session,
}

impl Builder {
    /// Rebuilds everything into memory. On success the new site replaces
    /// the served one in one step; on failure the previous site stays and
    /// the errors are kept for the overlay.
    fn rebuild(
        &mut self,
        site: &Live,
        server: &Server,
        building: &Mutex<()>,
        stopping: &AtomicBool,
    ) {
        let _building = building.lock().unwrap_or_else(|e| e.into_inner());
        if stopping.load(Ordering::SeqCst) {
            return;
        }
        let result = build_in_session(&self.options, &mut self.session).inspect(|_| {
            site.replace(Arc::clone(self.session.site()));
        });
        match describe(&result, self.timings) {
            Ok(summary) => {
                println!("{summary}");
                server.set_error(None);
            }
            Err(problems) => {
                eprintln!("{problems}\nerror: build failed; still serving the last good version");
                server.set_error(Some(problems));
            }
        }
    }
}

fn open_browser(url: &str) {
    let opener = if cfg!(target_os = "macos") {
        "open"
    } else {
        "xdg-open"
    };
    if let Err(e) = std::process::Command::new(opener).arg(url).spawn() {
        eprintln!("warning: could not open a browser ({opener}: {e}); open {url} yourself");
    }
}
