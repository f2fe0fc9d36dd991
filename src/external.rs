//! Outbound link checking for `errata check --external`, with reqwest on a
//! tokio runtime.
//!
//! Every `http(s)` URL written in content (Markdown, raw HTML, front matter)
//! or in templates is checked once, however many places use it. Requests are
//! grouped by host: at most `per_host_concurrency` in flight and at least
//! `per_host_interval_ms` between two starts, so no site is hammered. A
//! request that times out, fails to connect, or gets 429 or 503 is retried
//! with a doubling backoff, or after the server's `Retry-After`. A 405 or
//! 501 to HEAD is retried as GET. Redirects are followed (up to ten) and
//! reported as warnings. Working links are remembered in
//! `.errata/linkcache.json` for `cache_max_age_hours`; failures never are.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use regex::Regex;
use reqwest::{Method, StatusCode};
use tokio::sync::{Mutex, Semaphore};

use crate::config::{Config, ExternalConfig};
use crate::diagnostics::{Diagnostic, LineIndex};

/// Where a URL is written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UrlSite {
    /// The URL as written.
    pub url: String,
    /// The file, relative to the site root.
    pub path: PathBuf,
    /// 1-based line.
    pub line: usize,
    /// 1-based column.
    pub col: usize,
}

/// What checking one URL found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Answered with an accepted status.
    Ok,
    /// Works, but only after redirects to this URL.
    Redirected(String),
    /// Does not work, and why.
    Broken(String),
}

fn url_pattern() -> &'static Regex {
    static PATTERN: std::sync::LazyLock<Regex> = std::sync::LazyLock::new(|| {
        Regex::new(r#"https?://[^\s<>"'`)\]]+"#).expect("a valid pattern")
    });
    &PATTERN
}

/// Every outbound URL in the site's content and templates, where it is written.
pub fn find_urls(config: &Config) -> Vec<UrlSite> {
    let mut dirs = vec![
        config.root.join("content"),
        config.root.join("templates"),
        config.theme_dir.join("templates"),
    ];
    dirs.dedup();
    let mut sites = Vec::new();
    for dir in dirs {
        for (_, path) in crate::load::files_under(&dir) {
            let Ok(text) = std::fs::read_to_string(&path) else {
                continue;
            };
            let lines = LineIndex::new(&text);
            for m in url_pattern().find_iter(&text) {
                let url = m.as_str().trim_end_matches(['.', ',', ';', ':', '!', '?']);
                let (line, col) = lines.line_col(m.start());
                sites.push(UrlSite {
                    url: url.to_string(),
                    path: crate::load::relative(&config.root, &path),
                    line,
                    col,
                });
            }
        }
    }
    sites
}

/// The link cache: URL → when it last worked (seconds since the epoch).
fn load_cache(path: &Path, max_age: Duration) -> BTreeMap<String, u64> {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let cache: BTreeMap<String, u64> = std::fs::read_to_string(path)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default();
    cache
        .into_iter()
        .filter(|(_, at)| now.saturating_sub(*at) < max_age.as_secs())
        .collect()
}

/// How long a `Retry-After` header asks to wait (seconds or an HTTP date).
fn retry_after(value: &str, cap: Duration) -> Option<Duration> {
    let value = value.trim();
    let wait = match value.parse::<u64>() {
        Ok(secs) => Duration::from_secs(secs),
        Err(_) => {
            let at = httpdate(value)?;
            at.duration_since(SystemTime::now())
                .unwrap_or(Duration::ZERO)
        }
    };
    Some(wait.min(cap))
}

/// Parses an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`).
fn httpdate(text: &str) -> Option<SystemTime> {
    let parts: Vec<&str> = text.split_whitespace().collect();
    let [_, day, month, year, time, "GMT"] = parts.as_slice() else {
        return None;
    };
    let month = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ]
    .iter()
    .position(|m| m == month)? as i64
        + 1;
    let (day, year): (i64, i64) = (day.parse().ok()?, year.parse().ok()?);
    let hms: Vec<i64> = time
        .split(':')
        .map(|p| p.parse().ok())
        .collect::<Option<_>>()?;
    let [h, m, s] = hms.as_slice() else {
        return None;
    };
    // Days from the civil date (Howard Hinnant's days_from_civil).
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (month + if month > 2 { -3 } else { 9 }) + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let secs = days * 86_400 + h * 3600 + m * 60 + s;
    Some(UNIX_EPOCH + Duration::from_secs(u64::try_from(secs).ok()?))
}

struct Checker {
    client: reqwest::Client,
    settings: ExternalConfig,
    /// Per host: the semaphore for concurrency and the earliest next start.
    hosts: Mutex<HashMap<String, HostLimit>>,
}

/// One host's limit: requests in flight, and the earliest next start.
type HostLimit = (Arc<Semaphore>, Arc<Mutex<Instant>>);

impl Checker {
    async fn host(&self, host: &str) -> HostLimit {
        let mut hosts = self.hosts.lock().await;
        let entry = hosts.entry(host.to_string()).or_insert_with(|| {
            (
                Arc::new(Semaphore::new(self.settings.per_host_concurrency.max(1))),
                Arc::new(Mutex::new(Instant::now())),
            )
        });
        (Arc::clone(&entry.0), Arc::clone(&entry.1))
    }

    /// One request, spaced from the previous one to the same host.
    async fn request(
        &self,
        method: Method,
        url: &str,
    ) -> Result<reqwest::Response, reqwest::Error> {
        let host = reqwest::Url::parse(url)
            .ok()
            .and_then(|u| u.host_str().map(str::to_string))
            .unwrap_or_default();
        let (semaphore, next) = self.host(&host).await;
        let _permit = semaphore
            .acquire_owned()
            .await
            .expect("the semaphore is never closed");
        let wait = {
            let mut next = next.lock().await;
            let now = Instant::now();
            let start = (*next).max(now);
            *next = start + Duration::from_millis(self.settings.per_host_interval_ms);
            start - now
        };
        tokio::time::sleep(wait).await;
        self.client.request(method, url).send().await
    }

    async fn check(&self, url: &str) -> Outcome {
        let mut current = url.to_string();
        let mut redirected = false;
        let mut method = Method::HEAD;
        let mut attempt = 0;
        let mut hops = 0;
        loop {
            let backoff = Duration::from_millis(
                self.settings
                    .backoff_ms
                    .saturating_mul(1 << attempt.min(16)),
            );
            match self.request(method.clone(), &current).await {
                Ok(response) => {
                    let status = response.status();
                    if status.is_redirection() {
                        let location = response
                            .headers()
                            .get(reqwest::header::LOCATION)
                            .and_then(|l| l.to_str().ok());
                        let next =
                            location.and_then(|l| reqwest::Url::parse(&current).ok()?.join(l).ok());
                        match next {
                            Some(next) if hops < 10 => {
                                current = next.to_string();
                                redirected = true;
                                hops += 1;
                                continue;
                            }
                            _ => {
                                return Outcome::Broken(format!(
                                    "{status} with no usable Location, or too many redirects"
                                ));
                            }
                        }
                    }
                    if method == Method::HEAD
                        && matches!(
                            status,
                            StatusCode::METHOD_NOT_ALLOWED | StatusCode::NOT_IMPLEMENTED
                        )
                    {
                        method = Method::GET;
                        continue;
                    }
                    if self.settings.accept.contains(&status.as_u16()) {
                        return if redirected {
                            Outcome::Redirected(current)
                        } else {
                            Outcome::Ok
                        };
                    }
                    if matches!(
                        status,
                        StatusCode::TOO_MANY_REQUESTS | StatusCode::SERVICE_UNAVAILABLE
                    ) && attempt < self.settings.retries
                    {
                        let cap = Duration::from_secs(self.settings.max_retry_after_secs);
                        let wait = response
                            .headers()
                            .get(reqwest::header::RETRY_AFTER)
                            .and_then(|v| v.to_str().ok())
                            .and_then(|v| retry_after(v, cap))
                            .unwrap_or(backoff);
                        tokio::time::sleep(wait).await;
                        attempt += 1;
                        continue;
                    }
                    return Outcome::Broken(format!("HTTP {status}"));
                }
                Err(error)
                    if attempt < self.settings.retries
                        && (error.is_timeout() || error.is_connect()) =>
                {
                    tokio::time::sleep(backoff).await;
                    attempt += 1;
                }
                Err(error) if error.is_timeout() => {
                    return Outcome::Broken(format!(
                        "timed out after {} s",
                        self.settings.timeout_secs
                    ));
                }
                Err(error) => return Outcome::Broken(format!("request failed: {error}")),
            }
        }
    }
}

/// Checks every distinct URL in `sites` and returns one diagnostic per place
/// a broken (error) or redirected (warning) URL is written.
pub fn check_external(config: &Config, sites: &[UrlSite]) -> Result<Vec<Diagnostic>, String> {
    let settings = config.check.external.clone();
    let excludes: Vec<Regex> = settings
        .exclude
        .iter()
        .map(|p| {
            Regex::new(p).map_err(|e| {
                format!("site.toml: [check.external] exclude pattern `{p}` does not compile: {e}")
            })
        })
        .collect::<Result<_, _>>()?;
    let cache_path = config.root.join(".errata").join("linkcache.json");
    let max_age = Duration::from_secs(settings.cache_max_age_hours * 3600);
    let mut cache = load_cache(&cache_path, max_age);
    let mut urls: Vec<String> = sites.iter().map(|s| s.url.clone()).collect();
    urls.sort();
    urls.dedup();
    urls.retain(|u| !excludes.iter().any(|re| re.is_match(u)) && !cache.contains_key(u));

    let client = reqwest::Client::builder()
        .user_agent(settings.user_agent.clone())
        .timeout(Duration::from_secs(settings.timeout_secs))
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(|e| format!("cannot start the HTTP client: {e}"))?;
    let checker = Arc::new(Checker {
        client,
        settings,
        hosts: Mutex::new(HashMap::new()),
    });
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the async runtime: {e}"))?;
    let outcomes: Vec<(String, Outcome)> = runtime.block_on(async {
        let tasks: Vec<_> = urls
            .into_iter()
            .map(|url| {
                let checker = Arc::clone(&checker);
                tokio::spawn(async move {
                    let outcome = checker.check(&url).await;
                    (url, outcome)
                })
            })
            .collect();
        let mut outcomes = Vec::with_capacity(tasks.len());
        for task in tasks {
            if let Ok(result) = task.await {
                outcomes.push(result);
            }
        }
        outcomes
    });

    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let mut by_url: HashMap<&str, &Outcome> = HashMap::new();
    for (url, outcome) in &outcomes {
        if *outcome == Outcome::Ok {
            cache.insert(url.clone(), now);
        }
        by_url.insert(url, outcome);
    }
    if let Some(parent) = cache_path.parent() {
        let _ = std::fs::create_dir_all(parent);
    }
    let _ = std::fs::write(
        &cache_path,
        serde_json::to_string_pretty(&cache).unwrap_or_default(),
    );

    let mut problems = Vec::new();
    for site in sites {
        match by_url.get(site.url.as_str()) {
            Some(Outcome::Broken(why)) => {
                problems.push(Diagnostic::error(
                    &site.path,
                    site.line,
                    site.col,
                    format!("broken link {}: {why}", site.url),
                ));
            }
            Some(Outcome::Redirected(to)) => problems.push(
                Diagnostic::warning(
                    &site.path,
                    site.line,
                    site.col,
                    format!("{} redirects to {to}", site.url),
                )
                .with_help("link to the final address"),
            ),
            _ => {}
        }
    }
    Ok(problems)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_takes_seconds_or_dates_and_is_capped() {
        let cap = Duration::from_secs(60);
        assert_eq!(retry_after("3", cap), Some(Duration::from_secs(3)));
        assert_eq!(retry_after("3600", cap), Some(cap));
        assert_eq!(
            retry_after("Sun, 06 Nov 1994 08:49:37 GMT", cap),
            Some(Duration::ZERO)
        );
        assert_eq!(retry_after("soon", cap), None);
        assert_eq!(
            httpdate("Sun, 06 Nov 1994 08:49:37 GMT").unwrap(),
            UNIX_EPOCH + Duration::from_secs(784_111_777)
        );
    }

    #[test]
    fn urls_end_before_markdown_punctuation() {
        let found: Vec<&str> = url_pattern()
            .find_iter("[a](https://x.org/a?b=1) and <https://y.org/>, \"https://z.org/p\".")
            .map(|m| m.as_str())
            .collect();
        assert_eq!(
            found,
            ["https://x.org/a?b=1", "https://y.org/", "https://z.org/p"]
        );
    }
}
