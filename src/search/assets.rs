//! The search bundle's program files: Pagefind's script, worker, UI and
//! WebAssembly (the generic one and the stemming one for the site's
//! language), taken from the `pagefind` crate through its API, and the
//! version and word characters its entry file names. Pagefind minifies
//! its script each time, so they are made once per language and process
//! (`errata serve` rebuilds reuse them).

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex};

use pagefind::api::PagefindIndex;
use pagefind::options::PagefindServiceConfig;
use serde::Deserialize;

/// Pagefind's program files for one language.
pub struct Assets {
    /// Paths relative to the bundle's folder, and bytes.
    pub files: Vec<(String, Vec<u8>)>,
    /// Pagefind's version, which the meta index must carry.
    pub version: String,
    /// Characters that count as part of a word.
    pub include_characters: Vec<char>,
    /// Pagefind can stem the language (`wasm.{language}.pagefind`).
    pub stems: bool,
}

#[derive(Deserialize)]
struct Entry {
    version: String,
    include_characters: Vec<char>,
}

static MADE: LazyLock<Mutex<HashMap<String, Arc<Assets>>>> = LazyLock::new(Mutex::default);

/// Pagefind's program files for a site in `language`.
pub fn for_language(language: &str) -> Result<Arc<Assets>, String> {
    if let Some(made) = MADE.lock().expect("the assets").get(language) {
        return Ok(Arc::clone(made));
    }
    let made = Arc::new(make(language)?);
    MADE.lock()
        .expect("the assets")
        .insert(language.to_string(), Arc::clone(&made));
    Ok(made)
}

/// Asks Pagefind for the bundle of a one-word site and keeps all but its
/// index.
fn make(language: &str) -> Result<Assets, String> {
    let failed = |e: anyhow::Error| format!("search index (Pagefind): {e:#}");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .map_err(|e| format!("search index: {e}"))?;
    let options = PagefindServiceConfig::builder()
        .force_language(language.to_string())
        .build();
    let mut index = PagefindIndex::new(Some(options)).map_err(failed)?;
    let files = runtime
        .block_on(async {
            index
                .add_custom_record(
                    "/".into(),
                    "errata".into(),
                    language.into(),
                    None,
                    None,
                    None,
                )
                .await?;
            index.get_files().await
        })
        .map_err(failed)?;
    let mut entry = None;
    let mut kept = Vec::new();
    for file in files {
        let name: Vec<String> = file
            .filename
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        let name = name.join("/");
        if name == "pagefind-entry.json" {
            entry = Some(
                serde_json::from_slice::<Entry>(&file.contents)
                    .map_err(|e| format!("search index: Pagefind's entry file: {e}"))?,
            );
        } else if !(name.ends_with(".pf_meta")
            || name.starts_with("index/")
            || name.starts_with("fragment/")
            || name.starts_with("filter/"))
        {
            kept.push((name, file.contents));
        }
    }
    let entry = entry.ok_or("search index: Pagefind wrote no entry file")?;
    let stems = kept
        .iter()
        .any(|(name, _)| *name == format!("wasm.{language}.pagefind"));
    Ok(Assets {
        files: kept,
        version: entry.version,
        include_characters: entry.include_characters,
        stems,
    })
}
