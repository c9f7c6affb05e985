//! A guard between stdin and the LSP service: it re-frames the client's
//! byte stream and passes on only well-formed JSON-RPC messages.
//!
//! tower-lsp-server stops reading at the first frame it cannot decode (bad
//! JSON, a bad `Content-Length`, an empty body), which would end the session
//! over one broken message. Here such frames are logged and dropped, and the
//! reader resynchronises on the next `Content-Length` header.

use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};

/// Largest message accepted (a 20 MB file sent as JSON stays well below it).
const MAX_BODY: usize = 512 * 1024 * 1024;

/// Why a message can't be passed on, with its JSON-RPC error code.
pub struct Malformed {
    pub code: i64,
    pub why: String,
}

/// Whether `body` is a JSON-RPC 2.0 message tower-lsp-server can decode.
pub fn is_well_formed(body: &[u8]) -> Result<(), Malformed> {
    let value: serde_json::Value =
        serde_json::from_slice(body).map_err(|e| Malformed { code: -32700, why: format!("invalid JSON: {e}") })?;
    check_request(&value).map_err(|why| Malformed { code: -32600, why })
}

fn check_request(value: &serde_json::Value) -> Result<(), String> {
    let object = value.as_object().ok_or("not a JSON object")?;
    if object.get("jsonrpc").and_then(|v| v.as_str()) != Some("2.0") {
        return Err("missing \"jsonrpc\": \"2.0\"".into());
    }
    if !object.contains_key("method") && !object.contains_key("id") {
        return Err("neither a request, a notification nor a response".into());
    }
    if let Some(method) = object.get("method") {
        if !method.is_string() {
            return Err("\"method\" is not a string".into());
        }
    }
    // tower-lsp-server stops reading at an id it cannot represent.
    match object.get("id") {
        None | Some(serde_json::Value::Null | serde_json::Value::String(_)) => {}
        Some(serde_json::Value::Number(n)) if n.is_i64() => {}
        Some(_) => return Err("\"id\" is not an integer or a string".into()),
    }
    Ok(())
}

/// A message's method and id, read without its params.
#[derive(serde::Deserialize)]
struct Head<'a> {
    #[serde(borrow)]
    method: Option<std::borrow::Cow<'a, str>>,
    id: Option<serde_json::Value>,
}

fn head(body: &[u8]) -> Option<Head<'_>> {
    serde_json::from_slice(body).ok()
}

#[cfg(test)]
fn dollar_request_reply(body: &[u8]) -> Option<Vec<u8>> {
    dollar_reply(&head(body)?)
}

/// The error answer to a `$/` request, if `head` is one's. The protocol says
/// such requests must be answered with MethodNotFound; tower-lsp-server
/// drops them unanswered, which would leave the client waiting for ever.
fn dollar_reply(head: &Head<'_>) -> Option<Vec<u8>> {
    let method = head.method.as_deref()?;
    let id = head.id.as_ref().filter(|id| !id.is_null())?;
    method.starts_with("$/").then(|| {
        let reply = serde_json::json!({
            "jsonrpc": "2.0",
            "id": id,
            "error": {"code": -32601, "message": format!("method not found: {method}")},
        });
        frame(reply.to_string().as_bytes())
    })
}

/// A whole LSP frame: header and body.
pub fn frame(body: &[u8]) -> Vec<u8> {
    let mut out = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    out.extend_from_slice(body);
    out
}

/// Reads `Content-Length` frames, resynchronising on the next header after
/// a frame whose header is unusable.
struct FrameReader<R> {
    reader: BufReader<R>,
    line: Vec<u8>,
}

impl<R: AsyncRead + Unpin> FrameReader<R> {
    fn new(input: R) -> Self {
        FrameReader { reader: BufReader::new(input), line: Vec::new() }
    }

    /// The next frame's body; `None` at the end of the input.
    async fn next(&mut self) -> Option<Vec<u8>> {
        loop {
            // Headers: lines up to an empty one.
            let mut length: Option<usize> = None;
            let mut bad_header = false;
            loop {
                self.line.clear();
                match self.reader.read_until(b'\n', &mut self.line).await {
                    Ok(0) | Err(_) => return None,
                    Ok(_) => {}
                }
                let text = String::from_utf8_lossy(&self.line);
                let text = text.trim_end_matches(['\r', '\n']);
                if text.is_empty() {
                    if length.is_some() || bad_header {
                        break;
                    }
                    continue; // stray blank line between messages
                }
                // A header may follow the unread body of a dropped message on the same line.
                let text = match text.to_ascii_lowercase().rfind("content-length:") {
                    Some(at) if at > 0 => &text[at..],
                    _ => text,
                };
                match text.split_once(':') {
                    Some((name, value)) if name.trim().eq_ignore_ascii_case("content-length") => {
                        match value.trim().parse::<usize>() {
                            Ok(n) if n <= MAX_BODY => length = Some(n),
                            _ => {
                                tracing::warn!("dropping a message with Content-Length {:?}", value.trim());
                                bad_header = true;
                            }
                        }
                    }
                    Some(_) => {} // Content-Type and other headers
                    None => tracing::warn!("ignoring a line that is not a header: {:?}", truncate(text)),
                }
            }
            let Some(length) = length.filter(|_| !bad_header) else { continue };
            let mut body = vec![0; length];
            if self.reader.read_exact(&mut body).await.is_err() {
                return None;
            }
            return Some(body);
        }
    }
}

/// Copies LSP frames from `input` to `output` until `input` ends. A
/// malformed frame is dropped, and its error reply (id null, as JSON-RPC
/// asks when the id can't be known) goes to `replies`. `shutdown_seen` is
/// set when a `shutdown` request passes, in stream order: an `exit` right
/// behind it may cancel its handler before it runs.
pub async fn filter(
    input: impl AsyncRead + Unpin,
    mut output: impl AsyncWrite + Unpin,
    replies: tokio::sync::mpsc::UnboundedSender<Vec<u8>>,
    shutdown_seen: std::sync::Arc<std::sync::atomic::AtomicBool>,
) {
    let mut reader = FrameReader::new(input);
    while let Some(body) = reader.next().await {
        if let Err(Malformed { code, why }) = is_well_formed(&body) {
            tracing::warn!("dropping a malformed message ({why}): {:?}", truncate(&String::from_utf8_lossy(&body)));
            let reply = serde_json::json!({"jsonrpc": "2.0", "id": null, "error": {"code": code, "message": why}});
            let _ = replies.send(frame(reply.to_string().as_bytes()));
            continue;
        }
        let head = head(&body);
        if let Some(reply) = head.as_ref().and_then(dollar_reply) {
            tracing::warn!("answering an unknown $/ request: {:?}", truncate(&String::from_utf8_lossy(&body)));
            let _ = replies.send(reply);
            continue;
        }
        if head.as_ref().is_some_and(|h| h.method.as_deref() == Some("shutdown") && h.id.is_some()) {
            shutdown_seen.store(true, std::sync::atomic::Ordering::SeqCst);
        }
        if output.write_all(&frame(&body)).await.is_err() {
            return;
        }
        let _ = output.flush().await;
    }
}

/// Reads whole frames written by the server and passes them to `frames`, so
/// they can be interleaved with the filter's error replies without tearing.
pub async fn frames(input: impl AsyncRead + Unpin, frames: tokio::sync::mpsc::UnboundedSender<Vec<u8>>) {
    let mut reader = FrameReader::new(input);
    while let Some(body) = reader.next().await {
        if frames.send(frame(&body)).is_err() {
            return;
        }
    }
}

/// Writes frames to `output` in the order they arrive.
pub async fn write_out(mut frames: tokio::sync::mpsc::UnboundedReceiver<Vec<u8>>, mut output: impl AsyncWrite + Unpin) {
    while let Some(frame) = frames.recv().await {
        if output.write_all(&frame).await.is_err() || output.flush().await.is_err() {
            return;
        }
    }
}

fn truncate(s: &str) -> &str {
    let mut end = s.len().min(120);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn well_formed_messages() {
        assert!(is_well_formed(br#"{"jsonrpc":"2.0","method":"initialized","params":{}}"#).is_ok());
        assert!(is_well_formed(br#"{"jsonrpc":"2.0","id":1,"result":null}"#).is_ok());
        assert!(is_well_formed(br#"{"jsonrpc":"2.0","id":"a","method":"x"}"#).is_ok());
        assert!(is_well_formed(br#"{"jsonrpc":"2.0","id":-3,"method":"x"}"#).is_ok());
        for bad in [
            &b"{"[..],
            b"[]",
            b"null",
            b"{}",
            br#"{"id":1,"method":"x"}"#,
            br#"{"jsonrpc":"2.0"}"#,
            b"\xff",
            br#"{"jsonrpc":"2.0","id":{},"method":"x"}"#,
            br#"{"jsonrpc":"2.0","id":1.5,"method":"x"}"#,
            br#"{"jsonrpc":"2.0","id":true,"method":"x"}"#,
            br#"{"jsonrpc":"2.0","id":99999999999999999999,"method":"x"}"#,
            br#"{"jsonrpc":"2.0","id":[1]}"#,
        ] {
            assert!(is_well_formed(bad).is_err(), "{:?}", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn dollar_requests_are_answered_and_dollar_notifications_left_alone() {
        let reply = dollar_request_reply(br#"{"jsonrpc":"2.0","id":7,"method":"$/x","params":{}}"#).unwrap();
        let reply = String::from_utf8(reply).unwrap();
        assert!(reply.contains(r#""id":7"#) && reply.contains("-32601"), "{reply}");
        assert!(dollar_request_reply(br#"{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":1}}"#).is_none());
        assert!(dollar_request_reply(br#"{"jsonrpc":"2.0","id":7,"method":"textDocument/hover"}"#).is_none());
    }

    #[tokio::test]
    async fn bad_frames_are_dropped_and_the_stream_resynchronises() {
        let good = r#"{"jsonrpc":"2.0","method":"a"}"#;
        let input = format!(
            "Content-Length: 3\r\n\r\n{{x]Content-Length: lots\r\n\r\nContent-Length: 0\r\n\r\nContent-Length: {}\r\n\r\n{good}",
            good.len()
        );
        let mut out = Vec::new();
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        filter(input.as_bytes(), &mut out, tx, Default::default()).await;
        assert_eq!(String::from_utf8(out).unwrap(), format!("Content-Length: {}\r\n\r\n{good}", good.len()));
        // One error reply per dropped body: `{x]` (invalid JSON) and the empty one.
        let mut replies = Vec::new();
        while let Ok(r) = rx.try_recv() {
            replies.push(String::from_utf8(r).unwrap());
        }
        assert_eq!(replies.len(), 2, "{replies:?}");
        assert!(replies.iter().all(|r| r.contains("\"id\":null") && r.contains("-32700")), "{replies:?}");
    }
}
