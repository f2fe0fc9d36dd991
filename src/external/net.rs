//! The link checker's HTTP client: hyper with rustls, over a connector
//! that does two things a stock client cannot promise.
//!
//! - **Every socket holds a permit.** The permit is taken before the socket
//!   is opened and released only when the socket itself is dropped, so the
//!   number of open sockets never exceeds `max_concurrency`, whatever the
//!   connection pool or a slow close does.
//! - **The address connected to is the address checked.** Names are
//!   resolved here, non-public addresses are dropped (unless private
//!   addresses are allowed), and the socket is opened to one of the
//!   addresses that remain. There is no second lookup between the check and
//!   the connection for a rebinding DNS server to answer differently. IP
//!   literals go through the same check.

use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Empty;
use hyper::Uri;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::{Connected, Connection};
use hyper_util::rt::{TokioExecutor, TokioIo};
use tokio::net::TcpStream;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::address::non_public;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The client `errata check --external` sends its requests with.
pub type HttpClient = Client<hyper_rustls::HttpsConnector<CappedConnector>, Empty<Bytes>>;

/// A connection refused because every address of the host is non-public.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Blocked {
    /// The host as written in the URL.
    pub host: String,
    /// The first address it resolved to.
    pub ip: IpAddr,
    /// What kind of address that is (`loopback`, `private`...).
    pub kind: &'static str,
}

impl std::fmt::Display for Blocked {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let article = if self.kind.starts_with(['a', 'e', 'i', 'o', 'u']) {
            "an"
        } else {
            "a"
        };
        let (ip, kind) = (self.ip, self.kind);
        if self.host.trim_matches(['[', ']']).parse::<IpAddr>().is_ok() {
            write!(f, "{ip} is {article} {kind} address")
        } else {
            write!(
                f,
                "{} resolves to {ip}, {article} {kind} address",
                self.host
            )
        }
    }
}

impl std::error::Error for Blocked {}

/// Finds a [`Blocked`] anywhere in an error's chain of causes.
pub fn blocked_cause(error: &(dyn std::error::Error + 'static)) -> Option<Blocked> {
    let mut current = Some(error);
    while let Some(e) = current {
        if let Some(blocked) = e.downcast_ref::<Blocked>() {
            return Some(blocked.clone());
        }
        current = e.source();
    }
    None
}

/// True when `host` is `listed` or one of its subdomains (case and a
/// trailing dot ignored; IPv6 brackets ignored).
pub fn host_matches(host: &str, listed: &str) -> bool {
    let clean = |h: &str| {
        h.trim_matches(['[', ']'])
            .trim_end_matches('.')
            .to_ascii_lowercase()
    };
    let (host, listed) = (clean(host), clean(listed));
    host == listed || host.ends_with(&format!(".{listed}"))
}

/// How the link checker's client connects.
#[derive(Debug, Clone)]
pub struct ClientSettings {
    /// Open sockets at most.
    pub max_sockets: usize,
    /// Connect to non-public addresses too.
    pub include_private: bool,
    /// Hosts (as written in URLs; subdomains match) whose non-public
    /// addresses are connected to anyway.
    pub private_hosts: Vec<String>,
    /// Time allowed for resolving and connecting.
    pub connect_timeout: Duration,
}

/// Resolves, filters and connects; see the module documentation.
#[derive(Clone)]
pub struct CappedConnector {
    sockets: Arc<Semaphore>,
    settings: Arc<ClientSettings>,
}

impl tower_service::Service<Uri> for CappedConnector {
    type Response = CappedStream;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<CappedStream, BoxError>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, uri: Uri) -> Self::Future {
        let this = self.clone();
        Box::pin(async move { this.connect(uri).await })
    }
}

impl CappedConnector {
    async fn connect(self, uri: Uri) -> Result<CappedStream, BoxError> {
        let host = uri.host().ok_or("the URL has no host")?.to_string();
        let bare = host.trim_matches(['[', ']']);
        let port = uri
            .port_u16()
            .unwrap_or(if uri.scheme_str() == Some("https") {
                443
            } else {
                80
            });
        let permit = Arc::clone(&self.sockets).acquire_owned().await?;
        let settings = &self.settings;
        let private_ok = settings.include_private
            || settings
                .private_hosts
                .iter()
                .any(|listed| host_matches(bare, listed));
        let addrs: Vec<SocketAddr> = match bare.parse::<IpAddr>() {
            Ok(ip) => vec![SocketAddr::new(ip, port)],
            Err(_) => tokio::time::timeout(
                settings.connect_timeout,
                tokio::net::lookup_host((bare, port)),
            )
            .await
            .map_err(|_| format!("looking up {bare} timed out"))?
            .map_err(|e| format!("cannot resolve {bare}: {e}"))?
            .collect(),
        };
        let mut blocked = None;
        let allowed: Vec<SocketAddr> = addrs
            .into_iter()
            .filter(|addr| match non_public(addr.ip()) {
                Some(kind) if !private_ok => {
                    blocked.get_or_insert(Blocked {
                        host: host.clone(),
                        ip: addr.ip(),
                        kind,
                    });
                    false
                }
                _ => true,
            })
            .collect();
        if allowed.is_empty() {
            return Err(match blocked {
                Some(blocked) => Box::new(blocked),
                None => format!("{bare} has no addresses").into(),
            });
        }
        let mut last: BoxError = "no address to connect to".into();
        for addr in allowed {
            match tokio::time::timeout(settings.connect_timeout, TcpStream::connect(addr)).await {
                Ok(Ok(stream)) => {
                    let _ = stream.set_nodelay(true);
                    return Ok(CappedStream {
                        io: TokioIo::new(stream),
                        _permit: permit,
                    });
                }
                Ok(Err(e)) => last = format!("cannot connect to {addr}: {e}").into(),
                Err(_) => last = format!("connecting to {addr} timed out").into(),
            }
        }
        Err(last)
    }
}

/// A TCP stream that holds one of the client's socket permits until it is
/// dropped.
pub struct CappedStream {
    io: TokioIo<TcpStream>,
    _permit: OwnedSemaphorePermit,
}

impl Connection for CappedStream {
    fn connected(&self) -> Connected {
        self.io.connected()
    }
}

impl hyper::rt::Read for CappedStream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: hyper::rt::ReadBufCursor<'_>,
    ) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_read(cx, buf)
    }
}

impl hyper::rt::Write for CappedStream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.get_mut().io).poll_write(cx, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_shutdown(cx)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.get_mut().io).poll_write_vectored(cx, bufs)
    }
}

/// A client whose open sockets never exceed `max_sockets`, which connects
/// only to public addresses unless told otherwise. Connections are not kept
/// idle: an idle pooled socket would hold a permit other hosts need.
pub fn client(settings: ClientSettings) -> HttpClient {
    let connector = CappedConnector {
        sockets: Arc::new(Semaphore::new(settings.max_sockets.max(1))),
        settings: Arc::new(settings),
    };
    let https = hyper_rustls::HttpsConnectorBuilder::new()
        .with_webpki_roots()
        .https_or_http()
        .enable_http1()
        .wrap_connector(connector);
    Client::builder(TokioExecutor::new())
        .pool_max_idle_per_host(0)
        .build(https)
}
