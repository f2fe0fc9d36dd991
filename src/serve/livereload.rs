//! The live-reload WebSocket at `/__errata/livereload`.
//!
//! Each tab gets its own task. A reload is a generation number in a
//! `watch` channel: sending it never waits for a tab, and a tab that falls
//! behind sees one pending reload, not a queue. Each write to a tab has
//! `write_timeout` to be accepted; a tab that stops reading is dropped then,
//! and no other tab ever waits for it. The task also answers pings and
//! closes, so the socket is a well-behaved WebSocket, and it reads at most
//! one small frame at a time: data frames are discarded, never buffered.
//! Tabs are capped (`max_tabs`, then 503), and each is pinged every third
//! of `tab_idle_timeout` and dropped when it has sent nothing (browsers
//! answer pings by themselves) for that long.

use std::sync::Arc;

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::header::{self, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::mpsc;

use super::http::{State, plain};

/// Largest client frame payload accepted (the client sends none but
/// control frames; anything this big is not our page's script).
const MAX_FRAME: u64 = 64 * 1024;

/// The kernel send buffer of a live-reload socket, in bytes.
const SEND_BUFFER: usize = 16 * 1024;

fn header_has(request: &Request<Incoming>, name: header::HeaderName, token: &str) -> bool {
    request
        .headers()
        .get_all(name)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|v| v.trim().eq_ignore_ascii_case(token))
}

/// Answers the handshake (101, or why not) and starts the tab's task.
pub(super) fn handshake(request: Request<Incoming>, state: &Arc<State>) -> Response<Full<Bytes>> {
    // Browsers always send Origin with a WebSocket handshake, and a page
    // cannot forge it: a foreign one is another site's page.
    // cannot forge it: a foreign one is another site's page. Each one is
    // judged (a second header must not hide the first).
    let origins = request.headers().get_all(header::ORIGIN);
    if origins.iter().count() > 1
        || origins
            .iter()
            .any(|origin| !origin.to_str().is_ok_and(|o| state.is_local_origin(o)))
    {
        return plain(StatusCode::FORBIDDEN, "foreign Origin");
    }
    let key = request
        .headers()
        .get(header::SEC_WEBSOCKET_KEY)
        .map(|k| k.as_bytes().to_vec());
    let valid = request.method() == Method::GET
        && header_has(&request, header::UPGRADE, "websocket")
        && header_has(&request, header::CONNECTION, "upgrade")
        && header_has(&request, header::SEC_WEBSOCKET_VERSION, "13");
    let (true, Some(key)) = (valid, key) else {
        let mut response = plain(
            StatusCode::UPGRADE_REQUIRED,
            "this path is the live-reload WebSocket",
        );
        response.headers_mut().insert(
            header::SEC_WEBSOCKET_VERSION,
            HeaderValue::from_static("13"),
        );
        return response;
    };
    let Ok(permit) = Arc::clone(&state.tabs).try_acquire_owned() else {
        return plain(
            StatusCode::SERVICE_UNAVAILABLE,
            "too many live-reload tabs are open",
        );
    };
    let accept = tungstenite::handshake::derive_accept_key(&key);
    let state = Arc::clone(state);
    tokio::spawn(async move {
        let _permit = permit;
        // The socket itself, so that reading and writing are independent.
        if let Ok(upgraded) = hyper::upgrade::on(request).await
            && let Ok(parts) = upgraded.downcast::<TokioIo<TcpStream>>()
        {
            tab(parts.io.into_inner(), parts.read_buf, &state).await;
        }
    });
    let mut response = Response::new(Full::new(Bytes::new()));
    *response.status_mut() = StatusCode::SWITCHING_PROTOCOLS;
    let headers = response.headers_mut();
    headers.insert(header::UPGRADE, HeaderValue::from_static("websocket"));
    headers.insert(header::CONNECTION, HeaderValue::from_static("Upgrade"));
    if let Ok(accept) = HeaderValue::from_str(&accept) {
        headers.insert(header::SEC_WEBSOCKET_ACCEPT, accept);
    }
    response
}

/// A frame to send: opcode and payload (server frames are not masked).
fn frame(opcode: u8, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(payload.len() + 2);
    out.push(0x80 | opcode);
    out.push(u8::try_from(payload.len()).unwrap_or(125).min(125));
    out.extend_from_slice(&payload[..payload.len().min(125)]);
    out
}

/// One tab: sends reloads, answers pings and closes, until either side is
/// done or a write takes longer than `write_timeout`.
async fn tab(mut socket: TcpStream, early: Bytes, state: &State) {
    // Live reload sends a few bytes now and then: a small send buffer means
    // a tab that stops reading is noticed (and dropped) after kilobytes,
    // not after the megabytes the kernel would otherwise queue for it.
    let _ = socket2::SockRef::from(&socket).set_send_buffer_size(SEND_BUFFER);
    let (reader, mut writer) = socket.split();
    // Frames are read a few bytes at a time: buffer the socket, boundedly,
    // after whatever the client sent along with its handshake.
    let mut reader = tokio::io::BufReader::with_capacity(4096, (&early[..]).chain(reader));
    let mut reloads = state.reloads.clone();
    reloads.mark_unchanged();
    // Replies the reader wants sent; a tab that does not read them soon is dropped.
    let (replies, mut to_send) = mpsc::channel::<Vec<u8>>(4);
    let timeout = state.limits.write_timeout;
    let idle = state.limits.tab_idle_timeout;
    let mut pings = tokio::time::interval(idle / 3);
    pings.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    pings.tick().await;
    let send = async move {
        loop {
            let bytes = tokio::select! {
                _ = pings.tick() => frame(0x9, b""),
                changed = reloads.changed() => match changed {
                    Ok(()) => frame(0x1, b"reload"),
                    Err(_) => return,
                },
                reply = to_send.recv() => match reply {
                    Some(bytes) => bytes,
                    None => return,
                },
            };
            let close = bytes.first() == Some(&0x88);
            match tokio::time::timeout(timeout, writer.write_all(&bytes)).await {
                Ok(Ok(())) if !close => {}
                _ => return,
            }
        }
    };
    let receive = async move {
        while let Ok(Some((opcode, payload))) =
            tokio::time::timeout(idle, read_frame(&mut reader)).await
        {
            match opcode {
                // A pong may be skipped while earlier ones wait (RFC 6455
                // 5.5.3): a tab that floods pings gets no more than 4 queued.
                0x9 => {
                    let _ = replies.try_send(frame(0xA, &payload));
                }
                // Close: reply, and the sender ends once the reply is written.
                0x8 => {
                    if replies.try_send(frame(0x8, &payload)).is_ok() {
                        std::future::pending::<()>().await;
                    }
                    return;
                }
                _ => {}
            }
        }
    };
    tokio::select! {
        () = send => {}
        () = receive => {}
    }
}

/// Reads one client frame: its opcode and, for control frames, payload
/// (unmasked). `None` at the end of the stream, on a protocol error, or
/// for a frame larger than [`MAX_FRAME`].
async fn read_frame<R: AsyncRead + Unpin>(reader: &mut R) -> Option<(u8, Vec<u8>)> {
    let mut head = [0u8; 2];
    reader.read_exact(&mut head).await.ok()?;
    let opcode = head[0] & 0x0f;
    let masked = head[1] & 0x80 != 0;
    let mut len = u64::from(head[1] & 0x7f);
    if len == 126 {
        let mut ext = [0u8; 2];
        reader.read_exact(&mut ext).await.ok()?;
        len = u64::from(u16::from_be_bytes(ext));
    } else if len == 127 {
        let mut ext = [0u8; 8];
        reader.read_exact(&mut ext).await.ok()?;
        len = u64::from_be_bytes(ext);
    }
    // Clients must mask; control frames carry at most 125 bytes.
    if !masked || len > MAX_FRAME || (opcode >= 0x8 && len > 125) {
        return None;
    }
    let mut mask = [0u8; 4];
    reader.read_exact(&mut mask).await.ok()?;
    if opcode >= 0x8 {
        let mut payload = vec![0u8; usize::try_from(len).ok()?];
        reader.read_exact(&mut payload).await.ok()?;
        for (i, b) in payload.iter_mut().enumerate() {
            *b ^= mask[i % 4];
        }
        Some((opcode, payload))
    } else {
        // Data from the page is not used: skip it without keeping it.
        let mut rest = len;
        let mut sink = [0u8; 1024];
        while rest > 0 {
            let n = usize::try_from(rest.min(1024)).ok()?;
            reader.read_exact(&mut sink[..n]).await.ok()?;
            rest -= n as u64;
        }
        Some((opcode, Vec::new()))
    }
}
