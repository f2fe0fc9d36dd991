//! Stage 3, `assemble`: permalinks, sections, taxonomies and the link map.
//! Sequential and global; runs once between the parallel stages.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::PathBuf;

use crate::bundle;

use crate::claims::{Claims, Producer, html_file};
use crate::config::{CONFIG_FILE, Config, TAXONOMIES};
use crate::diagnostics::Diagnostic;
use crate::load::{SourceFile, SourceKind};
use crate::parse::{Parsed, ParsedPage, ParsedSection};
use crate::slug::slugify;

/// A page and where it lives.
#[derive(Debug)]
pub struct PageEntry {
    /// The parsed page.
    pub parsed: ParsedPage,
    /// Site path with a trailing slash, no leading one: `oom/cuda-out-of-memory/`.
    pub path: String,
    /// Index of its section in [`SiteIndex::sections`].
    pub section: usize,
}

/// A section and its members.
#[derive(Debug)]
pub struct SectionEntry {
    /// The `_index.md`, or `None` for the root when `content/_index.md` is absent.
    pub parsed: Option<ParsedSection>,
    /// Folder under `content/` with a trailing slash (`""` for the root, `oom/`).
    pub dir: String,
    /// Site path: `dir` with each segment slugified, as in page URLs.
    pub path: String,
    /// Its pages, newest first.
    pub pages: Vec<usize>,
    /// Its direct subsections, by weight then title.
    pub subsections: Vec<usize>,
    /// Parent section, `None` for the root.
    pub parent: Option<usize>,
}

impl SectionEntry {
    /// The section's title (empty when it has no `_index.md`).
    pub fn title(&self) -> &str {
        self.parsed.as_ref().map_or("", |p| p.front.title.as_str())
    }
}

/// One value of a taxonomy, such as `tools/ollama`.
#[derive(Debug)]
pub struct Term {
    /// As written in front matter (first spelling seen).
    pub name: String,
    /// URL segment.
    pub slug: String,
    /// Pages carrying it, newest first.
    pub pages: Vec<usize>,
}

/// One taxonomy and its terms.
#[derive(Debug)]
pub struct Taxonomy {
    /// `frameworks`, `tools` or `tags`.
    pub name: &'static str,
    /// Display title.
    pub title: String,
    /// Terms sorted by slug.
    pub terms: Vec<Term>,
}

/// Everything known about the site before rendering.
#[derive(Debug)]
pub struct SiteIndex {
    /// All pages.
    pub pages: Vec<PageEntry>,
    /// All sections; index 0 is the root.
    pub sections: Vec<SectionEntry>,
    /// Taxonomies in display order.
    pub taxonomies: Vec<Taxonomy>,
    /// Every page, newest first.
    pub recent: Vec<usize>,
    /// Content-relative source path (`oom/page.md`) → site path.
    pub by_source: HashMap<String, String>,
    /// Content files that exist but whose front matter is broken (already
    /// reported), by content-relative path: links to them are neither
    /// resolved nor reported.
    pub broken: HashSet<String>,
    /// The bodies of those files, where they could be found, to check
    /// their links in the same run.
    pub broken_bodies: Vec<BrokenBody>,
    /// Drafts left out of this build, by content-relative path: a link to
    /// one says so, rather than that nothing is there.
    pub drafts: HashSet<String>,
    /// Every output file the site's content, taxonomies and generated pages
    /// write, and who writes it (static files are checked against it).
    pub claims: Claims,
    /// The files of page bundles, by output path (`oom/b/smi.png`): each is
    /// copied beside its page.
    pub bundle_files: BTreeMap<String, PathBuf>,
    /// The static and theme files the build copies, by output path (set
    /// once assets are collected): content may link to them.
    pub static_files: StaticFiles,
}

pub use crate::local_links::StaticFiles;

/// The body of a file whose front matter is broken: it is not published,
/// but its links and anchors are still checked.
#[derive(Debug)]
pub struct BrokenBody {
    /// The file.
    pub source: SourceFile,
    /// Byte offset of the body.
    pub body_offset: usize,
    /// The site path the file would have without a `slug`.
    pub path: String,
}

impl SiteIndex {
    /// The published file a link in content names (see
    /// [`crate::local_links::Published::local_file`]).
    pub fn local_file(
        &self,
        link: &str,
        own_path: &str,
    ) -> Result<Option<crate::local_links::LocalFile>, String> {
        crate::local_links::Published {
            claims: &self.claims,
            bundle_files: &self.bundle_files,
            static_files: &self.static_files,
        }
        .local_file(link, own_path)
    }

    /// Resolves a link written in the content file `from` (content-relative,
    /// such as `oom/page.md`) whose own site path is `from_path`:
    /// `@/path.md#anchor`, a relative `../other.md#anchor`, or `#anchor`.
    /// Returns the target's site path and fragment; `Ok(None)` for links
    /// that are not to a content file (external, ordinary URLs).
    pub fn resolve(
        &self,
        link: &str,
        from: &str,
        from_path: &str,
    ) -> Result<Option<(String, Option<String>)>, String> {
        let (target, fragment) = match link.split_once('#') {
            Some((target, fragment)) => {
                (target, Some(fragment.to_string()).filter(|f| !f.is_empty()))
            }
            None => (link, None),
        };
        if target.is_empty() {
            return Ok(fragment.map(|f| (from_path.to_string(), Some(f))));
        }
        let file = if let Some(rest) = target.strip_prefix("@/") {
            rest.to_string()
        } else if target.ends_with(".md") && !target.contains(':') && !target.starts_with('/') {
            let dir = from.rfind('/').map_or("", |i| &from[..=i]);
            match crate::links::normalise(&format!("{dir}{target}")) {
                Some(file) => file,
                None => return Err(format!("link `{link}` points outside content/")),
            }
        } else {
            return Ok(None);
        };
        match self.by_source.get(&file) {
            Some(path) => Ok(Some((path.clone(), fragment))),
            None if self.broken.contains(&file) => Ok(None),
            None if self.drafts.contains(&file) => Err(format!(
                "link to draft page `{link}` (content/{file} has `draft: true`, and drafts are left out without --drafts)"
            )),
            None => Err(format!("link to missing page `{link}` (no content/{file})")),
        }
    }
}

/// Errors for pages and sections whose front matter names a `template`
/// that does not exist (`has` says which do), at their `template` key.
pub fn missing_templates(site: &SiteIndex, has: impl Fn(&str) -> bool) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let mut report = |name: &str, path: &std::path::Path, (line, col): (usize, usize)| {
        if !has(name) {
            out.push(
                Diagnostic::error(path, line, col, format!("template `{name}` not found"))
                    .with_help(
                        "add it under templates/ or the theme's templates/, or remove `template`",
                    ),
            );
        }
    };
    for page in &site.pages {
        if let Some(t) = &page.parsed.front.template {
            report(
                &t.0,
                &page.parsed.source.path,
                page.parsed.value_at("template").unwrap_or((1, 1)),
            );
        }
    }
    for section in &site.sections {
        if let Some(p) = &section.parsed
            && let Some(t) = &p.front.template
        {
            report(
                &t.0,
                &p.source.path,
                p.value_at("template").unwrap_or((1, 1)),
            );
        }
    }
    out
}

/// The site path of content folder `dir` (`CUDA Errors/` → `cuda-errors/`):
/// each segment slugified, as in page URLs.
fn dir_path(dir: &str) -> String {
    dir.split('/')
        .filter(|s| !s.is_empty())
        .map(|s| format!("{}/", slugify(s)))
        .collect()
}

/// `a/b/` → `a/`, `a/` → ``, `` → none.
fn parent_dir(dir: &str) -> Option<&str> {
    if dir.is_empty() {
        return None;
    }
    let trimmed = dir.trim_end_matches('/');
    Some(trimmed.rfind('/').map_or("", |i| &dir[..=i]))
}

/// The section of `dir` or of its nearest ancestor (the root at worst).
fn nearest_section(dir: &str, section_of_dir: &BTreeMap<String, usize>) -> usize {
    let mut dir = Some(dir);
    while let Some(d) = dir {
        if let Some(&i) = section_of_dir.get(d) {
            return i;
        }
        dir = parent_dir(d);
    }
    0
}

fn sort_key(page: &ParsedPage) -> (std::cmp::Reverse<String>, String, String) {
    let date = page
        .front
        .date
        .as_ref()
        .map(|d| d.0.clone())
        .unwrap_or_default();
    (
        std::cmp::Reverse(date),
        page.front.title.to_lowercase(),
        page.source.rel.clone(),
    )
}

/// Builds the [`SiteIndex`], reporting URL collisions.
pub fn assemble(parsed: Parsed, config: &Config) -> (SiteIndex, Vec<Diagnostic>) {
    let mut diagnostics = Vec::new();

    // Sections, by folder. The root always exists.
    let mut sections: Vec<SectionEntry> = Vec::new();
    let mut section_of_dir: BTreeMap<String, usize> = BTreeMap::new();
    let mut parsed_sections = parsed.sections;
    parsed_sections.sort_by(|a, b| a.source.rel.cmp(&b.source.rel));
    let root_parsed = parsed_sections
        .iter()
        .position(|s| s.source.rel == "_index.md")
        .map(|i| parsed_sections.remove(i));
    sections.push(SectionEntry {
        parsed: root_parsed,
        dir: String::new(),
        path: String::new(),
        pages: vec![],
        subsections: vec![],
        parent: None,
    });
    section_of_dir.insert(String::new(), 0);
    for section in parsed_sections {
        let dir = section.source.rel.trim_end_matches("_index.md").to_string();
        section_of_dir.insert(dir.clone(), sections.len());
        sections.push(SectionEntry {
            parsed: Some(section),
            path: dir_path(&dir),
            dir,
            pages: vec![],
            subsections: vec![],
            parent: None,
        });
    }
    // Parents: the nearest ancestor folder that has a section.
    for i in 1..sections.len() {
        let parent = nearest_section(parent_dir(&sections[i].dir).unwrap_or(""), &section_of_dir);
        sections[i].parent = Some(parent);
        sections[parent].subsections.push(i);
    }

    // Output files claimed so far. Fixed names first, so that content
    // colliding with them is reported at the content file.
    let mut claims = Claims::default();
    if config.search.enabled {
        claims.claim_folder(
            crate::search::FOLDER,
            Producer::new("the search index (`[search]`)", CONFIG_FILE, 1, 1),
        );
    }
    claims.claim_or_report(
        "404.html",
        Producer::new("the generated 404 page", CONFIG_FILE, 1, 1),
        &mut diagnostics,
    );
    // The paste box reads it: a static file may not stand in for it.
    claims.claim_or_report(
        crate::local_links::MATCH_INDEX_FILE,
        Producer::new("the generated match index", CONFIG_FILE, 1, 1),
        &mut diagnostics,
    );
    for name in TAXONOMIES {
        claims.claim_or_report(
            &html_file(&format!("{name}/")),
            Producer::new(
                format!("the `{name}` taxonomy's list page"),
                CONFIG_FILE,
                1,
                1,
            ),
            &mut diagnostics,
        );
    }
    for s in &sections {
        match &s.parsed {
            Some(p) => {
                claims.claim_or_report(
                    &html_file(&s.path),
                    Producer::new(
                        format!("section {}", p.source.path.display()),
                        &p.source.path,
                        1,
                        1,
                    ),
                    &mut diagnostics,
                );
            }
            None => {
                claims.claim_or_report(
                    &html_file(&s.path),
                    Producer::new("the home page", CONFIG_FILE, 1, 1),
                    &mut diagnostics,
                );
            }
        }
    }
    let mut by_source = HashMap::new();
    for s in &sections {
        if let Some(p) = &s.parsed {
            by_source.insert(p.source.rel.clone(), s.path.clone());
        }
    }

    let mut pages: Vec<PageEntry> = Vec::new();
    let mut bundle_files = BTreeMap::new();
    let mut parsed_pages = parsed.pages;
    parsed_pages.sort_by(|a, b| a.source.rel.cmp(&b.source.rel));
    for mut page in parsed_pages {
        let rel = &page.source.rel;
        let place = bundle::place(rel);
        let dir = place.dir;
        let slug = page
            .front
            .slug
            .as_ref()
            .map_or_else(|| slugify(place.name), |s| s.0.clone());
        let path = format!("{}{slug}/", dir_path(dir));
        let shown = page.source.path.display();
        let shown_page = page.source.path.display().to_string();
        let (line, col) = if page.front.slug.is_some() {
            page.value_at("slug").unwrap_or((1, 1))
        } else {
            (1, 1)
        };
        let producer = Producer::new(format!("page {shown}"), &page.source.path, line, col);
        if !claims.claim_or_report(&html_file(&path), producer, &mut diagnostics) {
            continue;
        }
        let mut refused = Vec::new();
        for (i, alias) in page.front.aliases.iter().enumerate() {
            let alias_path = format!("{}/", alias.0.trim_matches('/'));
            let (line, col) = page.value_at(&format!("aliases[{i}]")).unwrap_or((1, 1));
            let claimed = claims.claim_or_report(
                &html_file(&alias_path),
                Producer::new(
                    format!("alias /{alias_path} of page {shown}"),
                    &page.source.path,
                    line,
                    col,
                ),
                &mut diagnostics,
            );
            if !claimed {
                refused.push(i);
            }
        }
        // The build has failed; what was refused is not written as well.
        for i in refused.into_iter().rev() {
            page.front.aliases.remove(i);
        }
        if place.bundle {
            let folder = config
                .content_dir()
                .join(rel.strip_suffix(bundle::BUNDLE_INDEX).unwrap_or(rel));
            for file in bundle::files(&config.root, &folder) {
                let out = format!("{path}{}", file.rel);
                let shown = crate::load::relative(&config.root, &file.source);
                let producer = Producer::new(
                    format!("file {} of bundle {shown_page}", shown.display()),
                    &shown,
                    1,
                    1,
                );
                if claims.claim_or_report(&out, producer, &mut diagnostics) {
                    bundle_files.insert(out, file.source);
                }
            }
        }
        let section = nearest_section(dir, &section_of_dir);
        by_source.insert(rel.clone(), path.clone());
        pages.push(PageEntry {
            parsed: page,
            path,
            section,
        });
    }

    let broken = parsed.broken.iter().map(|b| b.source.rel.clone()).collect();
    let drafts = parsed.drafts.into_iter().collect();
    let broken_bodies = parsed
        .broken
        .into_iter()
        .filter_map(|b| {
            let body_offset = b.body_offset?;
            let rel = &b.source.rel;
            let path = match b.source.kind {
                SourceKind::Section => dir_path(rel.trim_end_matches("_index.md")),
                SourceKind::Page => {
                    let place = bundle::place(rel);
                    format!("{}{}/", dir_path(place.dir), slugify(place.name))
                }
            };
            Some(BrokenBody {
                source: b.source,
                body_offset,
                path,
            })
        })
        .collect();

    // Section membership, newest first.
    let mut order: Vec<usize> = (0..pages.len()).collect();
    order.sort_by_cached_key(|&i| sort_key(&pages[i].parsed));
    for &i in &order {
        sections[pages[i].section].pages.push(i);
    }
    let section_keys: Vec<(i64, String)> = sections
        .iter()
        .map(|s| {
            (
                s.parsed.as_ref().map_or(0, |p| p.front.weight),
                s.title().to_lowercase(),
            )
        })
        .collect();
    for s in &mut sections {
        s.subsections
            .sort_by(|a, b| section_keys[*a].cmp(&section_keys[*b]));
    }

    // Taxonomies.
    let mut taxonomies = Vec::new();
    for name in TAXONOMIES {
        let mut terms: BTreeMap<String, Term> = BTreeMap::new();
        for &i in &order {
            let front = &pages[i].parsed.front;
            let values = front.terms(name);
            for (k, value) in values.iter().enumerate() {
                let slug = slugify(value);
                if slug.is_empty() {
                    // No letter or digit to make a URL of: it lists nothing.
                    let page = &pages[i].parsed;
                    let (line, col) = page
                        .value_at(&format!("{name}[{k}]"))
                        .or_else(|| page.key_at(name))
                        .unwrap_or((1, 1));
                    diagnostics.push(
                        Diagnostic::warning(
                            &page.source.path,
                            line,
                            col,
                            format!("the {name} value `{value}` has no letter or digit to make a URL of, so no {name} page lists this page"),
                        )
                        .with_help("spell it with a letter or a digit, or remove it"),
                    );
                    continue;
                }
                let term = terms.entry(slug.clone()).or_insert_with(|| Term {
                    name: value.clone(),
                    slug,
                    pages: vec![],
                });
                if term.pages.last() != Some(&i) {
                    term.pages.push(i);
                }
            }
        }
        let title = config
            .taxonomies
            .get(name)
            .map_or_else(|| name.to_string(), |t| t.title.clone());
        for term in terms.values() {
            // The newest page carrying the term stands for it.
            let page = &pages[term.pages[0]].parsed;
            let (line, col) = page.key_at(name).unwrap_or((1, 1));
            claims.claim_or_report(
                &html_file(&format!("{name}/{}/", term.slug)),
                Producer::new(
                    format!("the `{name}` taxonomy's page for `{}`", term.name),
                    &page.source.path,
                    line,
                    col,
                ),
                &mut diagnostics,
            );
        }
        taxonomies.push(Taxonomy {
            name,
            title,
            terms: terms.into_values().collect(),
        });
    }
    // Sections list their pages over `page/2/`, `page/3/`...
    for s in &sections {
        let lists = s.pages.len().div_ceil(config.paginate_by.max(1));
        for n in 2..=lists {
            let (what, at) = match &s.parsed {
                Some(p) => (
                    format!("page {n} of section {}", p.source.path.display()),
                    p.source.path.clone(),
                ),
                None => (format!("page {n} of the home page"), CONFIG_FILE.into()),
            };
            claims.claim_or_report(
                &html_file(&format!("{}page/{n}/", s.path)),
                Producer::new(what, at, 1, 1),
                &mut diagnostics,
            );
        }
    }

    (
        SiteIndex {
            pages,
            sections,
            taxonomies,
            recent: order,
            by_source,
            broken,
            broken_bodies,
            drafts,
            claims,
            bundle_files,
            static_files: Default::default(),
        },
        diagnostics,
    )
}
