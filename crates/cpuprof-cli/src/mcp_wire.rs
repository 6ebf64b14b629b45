//! The MCP session's wire, in front of rmcp: standard input read a line at a time in bounded
//! memory, and the messages rmcp would drop or answer without an id answered as JSON-RPC 2.0
//! says (rmcp ignores text that is not JSON, by design, and answers a well-formed message of
//! the wrong shape with -32600 and no `id`).
//!
//! - not JSON (`{not json}`, a number out of range such as `"id": 1e400`): -32700, `id` null;
//! - a batch (`[]`, `[…]`; MCP has none since 2025-06-18) or an `id` that is neither a string
//!   nor an integer: -32600, `id` null;
//! - a request whose `params` is not an object: -32602 with its `id`;
//! - a line over [`MAX_LINE`] bytes: -32600, `id` null, and the line is skipped unread.
//!
//! The rest goes to rmcp unchanged; rmcp's output and these answers share standard output a
//! whole line at a time. When standard input closes, `on_close` runs, then rmcp's input ends.

use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

/// The longest message read (rmcp's own limit): a longer one is answered with an error.
pub(crate) const MAX_LINE: usize = 16 << 20;

/// Starts the wire's two tasks on the current runtime; returns rmcp's end of it (rmcp reads
/// the checked messages and writes its answers there), and the writing task, which ends once
/// rmcp's end is dropped and every answer is written.
pub(crate) fn start(
    on_close: impl FnOnce() + Send + 'static,
) -> (tokio::io::DuplexStream, tokio::task::JoinHandle<()>) {
    let (rmcp, ours) = tokio::io::duplex(1 << 20);
    let (from_rmcp, mut to_rmcp) = tokio::io::split(ours);
    let (answers, mut answered) = mpsc::unbounded_channel::<Vec<u8>>();
    tokio::spawn(async move {
        let mut stdin = BufReader::new(tokio::io::stdin());
        let mut line = Vec::new();
        loop {
            line.clear();
            match read_line(&mut stdin, &mut line).await {
                Ok(Line::Eof) | Err(_) => break,
                Ok(Line::TooLong) => {
                    let _ = answers.send(error(&Value::Null, -32600, "Invalid Request: longer than 16 MiB, not read"));
                }
                Ok(Line::Whole) => match check(&line) {
                    Ok(()) => {
                        if to_rmcp.write_all(&line).await.is_err() || to_rmcp.write_all(b"\n").await.is_err() {
                            break;
                        }
                    }
                    Err(answer) => {
                        let _ = answers.send(answer);
                    }
                },
            }
        }
        on_close();
        // rmcp sees the end of its input and ends the session.
        let _ = to_rmcp.shutdown().await;
    });
    let writing = tokio::spawn(async move {
        let mut stdout = tokio::io::stdout();
        let mut from_rmcp = BufReader::new(from_rmcp);
        let mut line = Vec::new();
        loop {
            tokio::select! {
                read = from_rmcp.read_until(b'\n', &mut line) => {
                    if !matches!(read, Ok(n) if n > 0) {
                        break;
                    }
                    if stdout.write_all(&line).await.is_err() || stdout.flush().await.is_err() {
                        break;
                    }
                    line.clear();
                }
                Some(answer) = answered.recv() => {
                    if stdout.write_all(&answer).await.is_err() || stdout.flush().await.is_err() {
                        return;
                    }
                }
            }
        }
        // rmcp is done; the answers to what came before the end of input still go out.
        while let Ok(answer) = answered.try_recv() {
            if stdout.write_all(&answer).await.is_err() {
                break;
            }
        }
        let _ = stdout.flush().await;
    });
    (rmcp, writing)
}

enum Line {
    Whole,
    TooLong,
    Eof,
}

/// One line (without its `\n`) into `line`, at most [`MAX_LINE`] bytes kept: a longer one is
/// read to its end and dropped.
async fn read_line(input: &mut BufReader<tokio::io::Stdin>, line: &mut Vec<u8>) -> std::io::Result<Line> {
    let mut too_long = false;
    loop {
        let buf = input.fill_buf().await?;
        if buf.is_empty() {
            return Ok(if line.is_empty() && !too_long { Line::Eof } else { Line::Whole });
        }
        let (chunk, done) = match buf.iter().position(|&b| b == b'\n') {
            Some(at) => (&buf[..at], at + 1),
            None => (buf, buf.len()),
        };
        let end = done > chunk.len();
        if !too_long {
            if line.len() + chunk.len() > MAX_LINE {
                too_long = true;
                line.clear();
            } else {
                line.extend_from_slice(chunk);
            }
        }
        input.consume(done);
        if end {
            return Ok(if too_long { Line::TooLong } else { Line::Whole });
        }
    }
}

/// `Ok` for a message rmcp can take; else the answer it gets here.
fn check(line: &[u8]) -> Result<(), Vec<u8>> {
    let text = line.strip_suffix(b"\r").unwrap_or(line);
    if text.iter().all(u8::is_ascii_whitespace) {
        return Ok(());
    }
    let message: Value =
        serde_json::from_slice(text).map_err(|e| error(&Value::Null, -32700, &format!("Parse error: {e}")))?;
    let Value::Object(fields) = &message else {
        let what = if message.is_array() { "a batch (MCP has none)" } else { "not an object" };
        return Err(error(&Value::Null, -32600, &format!("Invalid Request: {what}")));
    };
    let id = fields.get("id");
    if let Some(id) = id {
        if !(id.is_string() || id.is_i64() || id.is_u64()) {
            return Err(error(&Value::Null, -32600, "Invalid Request: id must be a string or an integer"));
        }
    }
    if let (Some(id), Some(Value::String(_))) = (id, fields.get("method")) {
        if fields.get("params").is_some_and(|p| !p.is_object()) {
            return Err(error(id, -32602, "Invalid params: params must be an object"));
        }
    }
    Ok(())
}

/// A JSON-RPC error answer, as one line.
fn error(id: &Value, code: i64, message: &str) -> Vec<u8> {
    let mut line = json!({ "jsonrpc": "2.0", "id": id, "error": { "code": code, "message": message } }).to_string();
    line.push('\n');
    line.into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(line: &str) -> Option<(i64, Value)> {
        check(line.as_bytes()).err().map(|a| {
            let v: Value = serde_json::from_slice(&a).unwrap();
            (v["error"]["code"].as_i64().unwrap(), v["id"].clone())
        })
    }

    #[test]
    fn what_rmcp_would_drop_or_answer_without_an_id_is_answered() {
        assert_eq!(code("{not json}"), Some((-32700, Value::Null)));
        assert_eq!(code("[]"), Some((-32600, Value::Null)));
        assert_eq!(code(r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#), Some((-32600, Value::Null)));
        assert_eq!(code(r#"{"jsonrpc":"2.0","id":1e400,"method":"ping"}"#).map(|c| c.0), Some(-32700));
        assert_eq!(code(r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#), Some((-32600, Value::Null)));
        assert_eq!(code(r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":[1]}"#), Some((-32602, json!(5))));
        assert_eq!(code(r#"{"jsonrpc":"2.0","id":"a","method":"tools/list"}"#), None);
        assert_eq!(code(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#), None);
    }
}
