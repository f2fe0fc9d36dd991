//! Outbound link checking for `errata check --external`, with hyper and
//! rustls on a tokio runtime.
//!
//! The links checked are those a reader can follow ([`crate::outbound`]): Markdown
//! links, `href`/`src` in raw HTML and templates, and the front matter's
//! sponsored URLs; never text in code blocks. Each distinct URL is checked
//! once. Requests are grouped by host: at most `per_host_concurrency` in
//! flight and at least `per_host_interval_ms` between two starts, so no site
//! is hammered; over all hosts, at most `max_concurrency` requests and open
//! sockets ([`net`]). Loopback, private, link-local and other non-public
//! addresses are skipped unless `include_private`, for the first URL and
//! every redirect hop, after DNS resolution ([`address`]). A request that
//! times out, fails to connect, or gets 429 or 503 is retried with a
//! doubling backoff, or after the server's `Retry-After`; on a host listed
//! in `unverifiable_hosts`, 403, 429 and 503 mean "could not verify"
//! instead. A 405 or 501 to HEAD is retried as GET. Redirects are followed
//! one hop at a time (up to `max_redirects`) and reported as warnings, with
//! the target's query string redacted. Working links are remembered in
//! `.errata/linkcache.json` for `cache_max_age_hours` (in a file of their
//! own when private addresses may be reached); failures never are.

pub mod address;
pub mod net;

pub use crate::outbound::UrlSite;

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use hyper::{Method, StatusCode, header};
use regex::Regex;
use tokio::sync::{Mutex, Semaphore};

use crate::config::{Config, ExternalConfig};
use crate::diagnostics::Diagnostic;

/// What checking one URL found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Answered with an accepted status.
    Ok,
    /// Works, but only after redirects to this URL (query redacted).
    Redirected(String),
    /// Does not work, and why.
    Broken(String),
    /// Not requested: it (or a redirect hop) is a non-public address.
    Skipped(String),
    /// A bot-blocking host answered 403, 429 or 503.
    Unverifiable(String),
}

/// The link cache's file: `linkcache.json`, or when private addresses may
/// be reached, one of that policy's own. A link that worked through a
/// private address is then never taken as checked by a run that skips
/// private addresses (which reports it as skipped).
fn cache_file(include_private: bool, private_hosts: &[String]) -> String {
    if !include_private && private_hosts.is_empty() {
        return "linkcache.json".into();
    }
    let mut policy = vec![if include_private { "all" } else { "named" }.as_bytes()];
    policy.extend(private_hosts.iter().map(|h| h.as_bytes()));
    format!(
        "linkcache-private-{}.json",
        &crate::hash::hash_hex(&policy)[..12]
    )
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

/// Why a request got no response.
enum Failure {
    /// The address is not public (and private addresses are not checked).
    Blocked(net::Blocked),
    /// No response within `timeout_secs`.
    Timeout,
    /// Could not connect (refused, unreachable, DNS failure).
    Connect(String),
    /// Anything else (TLS, protocol).
    Other(String),
}

/// The parts of a response the checker reads.
struct Answer {
    status: StatusCode,
    location: Option<String>,
    retry_after: Option<String>,
}

struct Checker {
    client: net::HttpClient,
    settings: ExternalConfig,
    /// Requests in flight over all hosts (the connector caps sockets too).
    requests: Semaphore,
    /// Per host: the semaphore for concurrency and the earliest next start.
    hosts: Mutex<HashMap<String, HostLimit>>,
}

/// One host's limit: requests in flight, and the earliest next start.
type HostLimit = (Arc<Semaphore>, Arc<Mutex<Instant>>);

/// `url` fit to print: credentials replaced by `***`, and, with
/// `redact_query`, the query and fragment replaced by `…`.
pub fn redact(url: &str, redact_query: bool) -> String {
    let Ok(mut parsed) = url::Url::parse(url) else {
        return url.to_string();
    };
    if !parsed.username().is_empty() || parsed.password().is_some() {
        let _ = parsed.set_username("***");
        let _ = parsed.set_password(None);
    }
    if !redact_query {
        return parsed.to_string();
    }
    let hidden = parsed.query().is_some() || parsed.fragment().is_some();
    parsed.set_query(None);
    parsed.set_fragment(None);
    let mut out = parsed.to_string();
    if hidden {
        out.push_str("?…");
    }
    out
}

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

    /// One request, spaced from the previous one to the same host, within
    /// the global limit. The response is dropped before the permits are, so
    /// its connection is on its way to being closed.
    async fn request(&self, method: Method, url: &url::Url) -> Result<Answer, Failure> {
        let host = url.host_str().unwrap_or_default().to_string();
        let (semaphore, next) = self.host(&host).await;
        let _host_permit = semaphore
            .acquire_owned()
            .await
            .expect("the semaphore is never closed");
        // The global permit first, then the host's next start: reserved
        // the other way round, requests queued behind the global limit
        // would start back to back once let through.
        let _permit = self
            .requests
            .acquire()
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
        // Credentials in the URL are never sent (nor printed).
        let mut target = url.clone();
        let _ = target.set_username("");
        let _ = target.set_password(None);
        target.set_fragment(None);
        let request = hyper::Request::builder()
            .method(method)
            .uri(target.as_str())
            .header(header::USER_AGENT, &self.settings.user_agent)
            .header(header::ACCEPT, "*/*")
            .body(http_body_util::Empty::new())
            .map_err(|e| Failure::Other(format!("cannot make the request: {e}")))?;
        let timeout = Duration::from_secs(self.settings.timeout_secs);
        match tokio::time::timeout(timeout, self.client.request(request)).await {
            Err(_) => Err(Failure::Timeout),
            Ok(Ok(response)) => {
                let text = |name| {
                    response
                        .headers()
                        .get(name)
                        .and_then(|v: &header::HeaderValue| v.to_str().ok())
                        .map(str::to_string)
                };
                Ok(Answer {
                    status: response.status(),
                    location: text(header::LOCATION),
                    retry_after: text(header::RETRY_AFTER),
                })
            }
            Ok(Err(error)) => {
                if let Some(blocked) = net::blocked_cause(&error) {
                    return Err(Failure::Blocked(blocked));
                }
                let mut message = error.to_string();
                let mut source = std::error::Error::source(&error);
                while let Some(cause) = source {
                    message = format!("{message}: {cause}");
                    source = cause.source();
                }
                if error.is_connect() {
                    Err(Failure::Connect(message))
                } else {
                    Err(Failure::Other(message))
                }
            }
        }
    }

    fn unverifiable(&self, hosts: [&str; 2]) -> bool {
        hosts.iter().any(|host| {
            self.settings
                .unverifiable_hosts
                .iter()
                .any(|listed| net::host_matches(host, listed))
        })
    }

    async fn check(&self, url: &str) -> Outcome {
        let Ok(mut current) = url::Url::parse(url) else {
            return Outcome::Broken("not a valid URL".into());
        };
        let first_host = current.host_str().unwrap_or_default().to_string();
        let mut redirected = false;
        let mut method = Method::HEAD;
        let mut attempt = 0;
        let mut hops = 0;
        let at = |redirected: bool, current: &url::Url| {
            if redirected {
                format!(" (at {}, after redirects)", redact(current.as_str(), true))
            } else {
                String::new()
            }
        };
        loop {
            let backoff = Duration::from_millis(
                self.settings
                    .backoff_ms
                    .saturating_mul(1 << attempt.min(16)),
            );
            match self.request(method.clone(), &current).await {
                Ok(answer) => {
                    let status = answer.status;
                    if matches!(status.as_u16(), 301 | 302 | 303 | 307 | 308) {
                        let next = answer
                            .location
                            .as_deref()
                            .and_then(|l| current.join(l).ok());
                        let Some(next) = next.filter(|n| matches!(n.scheme(), "http" | "https"))
                        else {
                            return Outcome::Broken(format!(
                                "{status} with no usable Location{}",
                                at(redirected, &current)
                            ));
                        };
                        if hops >= self.settings.max_redirects {
                            return Outcome::Broken(format!(
                                "more than {} redirects{}",
                                self.settings.max_redirects,
                                at(true, &next)
                            ));
                        }
                        current = next;
                        redirected = true;
                        hops += 1;
                        continue;
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
                            Outcome::Redirected(redact(current.as_str(), true))
                        } else {
                            Outcome::Ok
                        };
                    }
                    let host = current.host_str().unwrap_or_default();
                    if matches!(status.as_u16(), 403 | 429 | 503)
                        && self.unverifiable([host, &first_host])
                    {
                        // Some hosts turn away HEAD only: ask once with GET.
                        if method == Method::HEAD {
                            method = Method::GET;
                            continue;
                        }
                        return Outcome::Unverifiable(format!(
                            "HTTP {status}{}",
                            at(redirected, &current)
                        ));
                    }
                    if matches!(
                        status,
                        StatusCode::TOO_MANY_REQUESTS | StatusCode::SERVICE_UNAVAILABLE
                    ) && attempt < self.settings.retries
                    {
                        let cap = Duration::from_secs(self.settings.max_retry_after_secs);
                        let wait = answer
                            .retry_after
                            .as_deref()
                            .and_then(|v| retry_after(v, cap))
                            .unwrap_or(backoff);
                        tokio::time::sleep(wait).await;
                        attempt += 1;
                        continue;
                    }
                    return Outcome::Broken(format!("HTTP {status}{}", at(redirected, &current)));
                }
                Err(Failure::Blocked(blocked)) => {
                    return Outcome::Skipped(if redirected {
                        format!(
                            "it redirects to {}, and {blocked}",
                            redact(current.as_str(), true)
                        )
                    } else {
                        blocked.to_string()
                    });
                }
                Err(Failure::Timeout | Failure::Connect(_)) if attempt < self.settings.retries => {
                    tokio::time::sleep(backoff).await;
                    attempt += 1;
                }
                Err(Failure::Timeout) => {
                    return Outcome::Broken(format!(
                        "timed out after {} s{}",
                        self.settings.timeout_secs,
                        at(redirected, &current)
                    ));
                }
                Err(Failure::Connect(why) | Failure::Other(why)) => {
                    return Outcome::Broken(format!(
                        "request failed: {why}{}",
                        at(redirected, &current)
                    ));
                }
            }
        }
    }
}

/// Checks every distinct URL in `sites` and returns one diagnostic per place
/// a URL is written that is broken (an error), redirected (a warning),
/// skipped as non-public or could not be verified (notes).
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
    let cache_path = config.root.join(".errata").join(cache_file(
        settings.include_private,
        &settings.allow_private_hosts,
    ));
    let max_age = Duration::from_secs(settings.cache_max_age_hours * 3600);
    let mut cache = load_cache(&cache_path, max_age);
    let mut urls: Vec<String> = sites.iter().map(|s| s.url.clone()).collect();
    urls.sort();
    urls.dedup();
    urls.retain(|u| !excludes.iter().any(|re| re.is_match(u)) && !cache.contains_key(u));

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the async runtime: {e}"))?;
    let outcomes: Vec<(String, Outcome)> = runtime.block_on(async {
        let checker = Arc::new(Checker {
            client: net::client(net::ClientSettings {
                max_sockets: settings.max_concurrency,
                include_private: settings.include_private,
                private_hosts: settings.allow_private_hosts.clone(),
                connect_timeout: Duration::from_secs(settings.timeout_secs),
            }),
            requests: Semaphore::new(settings.max_concurrency.max(1)),
            settings,
            hosts: Mutex::new(HashMap::new()),
        });
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
        let Some(outcome) = by_url.get(site.url.as_str()) else {
            continue;
        };
        let url = redact(&site.url, false);
        let (path, line, col) = (&site.path, site.line, site.col);
        let diagnostic = match outcome {
            Outcome::Ok => continue,
            Outcome::Broken(why) => {
                Diagnostic::error(path, line, col, format!("broken link {url}: {why}"))
                    .with_code(CODE_BROKEN)
            }
            Outcome::Redirected(to) => {
                Diagnostic::warning(path, line, col, format!("{url} redirects to {to}"))
                    .with_help("link to the final address")
                    .with_code(CODE_REDIRECTED)
            }
            Outcome::Skipped(why) => {
                Diagnostic::note(path, line, col, format!("skipped {url}: {why}"))
                    .with_help(
                        "errata does not request non-public addresses; pass --include-private \
                 (or set include_private = true under [check.external]) to check them",
                    )
                    .with_code(CODE_SKIPPED)
            }
            Outcome::Unverifiable(why) => {
                Diagnostic::note(path, line, col, format!("could not verify {url}: {why}"))
                    .with_help(
                        "this host is listed in unverifiable_hosts because it turns automated \
                 requests away; open the link in a browser to check it",
                    )
                    .with_code(CODE_UNVERIFIABLE)
            }
        };
        problems.push(diagnostic);
    }
    Ok(problems)
}

/// The `code` of a broken outbound link.
pub const CODE_BROKEN: &str = "external-broken";
/// The `code` of a redirected outbound link.
pub const CODE_REDIRECTED: &str = "external-redirected";
/// The `code` of an outbound link skipped because its address is not public.
pub const CODE_SKIPPED: &str = "external-skipped";
/// The `code` of an outbound link a bot-blocking host would not answer.
pub const CODE_UNVERIFIABLE: &str = "external-unverifiable";

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
    fn redaction_hides_credentials_and_redirect_queries() {
        assert_eq!(
            redact("https://user:secret@x.org/a?token=1#f", false),
            "https://***@x.org/a?token=1#f"
        );
        assert_eq!(
            redact("https://user:secret@x.org/a?token=1#f", true),
            "https://***@x.org/a?…"
        );
        assert_eq!(redact("https://x.org/a", true), "https://x.org/a");
    }

    #[test]
    fn hosts_match_with_their_subdomains() {
        assert!(net::host_matches("www.amazon.com", "amazon.com"));
        assert!(net::host_matches("Amazon.com.", "amazon.com"));
        assert!(!net::host_matches("notamazon.com", "amazon.com"));
    }
}
