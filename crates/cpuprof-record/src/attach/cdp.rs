//! The inspector's two faces: its HTTP target list (`/json/list`) and the DevTools protocol
//! spoken over a WebSocket, with the protocol of each worker thread tunnelled through Node's
//! `NodeWorker` domain (each worker message a JSON string inside the params of a message of
//! the main session).
//!
//! Every read has a deadline. The socket's read timeout is short ([`POLL`]), so that a caller
//! waiting for a reply, or for the user to stop the recording, gets control back often; a
//! message that arrives in pieces across timeouts is put back together by tungstenite.

use std::collections::{HashMap, VecDeque};
use std::io;
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{json, Value};
use tungstenite::protocol::WebSocketConfig;
use tungstenite::{Message, WebSocket};

/// How long one read of the socket waits before the caller gets control back.
pub(crate) const POLL: Duration = Duration::from_millis(50);

/// How long a message may take to be written.
const WRITE_TIMEOUT: Duration = Duration::from_secs(10);

/// The largest message taken: a long profile of a big program runs to tens of megabytes, in
/// one frame.
const MAX_MESSAGE: usize = 1 << 30;

/// A target of the inspector's `/json/list`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ListedTarget {
    #[serde(default, rename = "type")]
    pub(crate) kind: String,
    #[serde(default)]
    pub(crate) web_socket_debugger_url: Option<String>,
}

/// Why the target list could not be had.
#[derive(Debug)]
pub(crate) enum ListError {
    /// Nothing answered, or not over HTTP (nothing listens, a timeout, …).
    Unreachable(String),
    /// An HTTP server answered, but not with a target list.
    NotInspector(String),
}

/// Fetches `http://ADDR/json/list`.
pub(crate) fn list_targets(addr: SocketAddr, timeout: Duration) -> Result<Vec<ListedTarget>, ListError> {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(timeout))
        // The inspector is reached directly, never through a proxy from the environment.
        .proxy(None)
        .http_status_as_error(false)
        .max_redirects(0)
        .build()
        .into();
    let url = format!("http://{addr}/json/list");
    let mut response = agent.get(&url).call().map_err(|e| ListError::Unreachable(describe_ureq(&e)))?;
    let status = response.status();
    if !status.is_success() {
        return Err(ListError::NotInspector(format!("HTTP {status}")));
    }
    let mut body = response
        .body_mut()
        .with_config()
        .limit(LIST_LIMIT)
        .read_to_vec()
        .map_err(|e| ListError::NotInspector(format!("not a target list ({})", describe_ureq(&e))))?;
    // Node 20 writes a script's title and url into the list as they are, control characters
    // and all (a tab in a file name), which JSON does not allow in strings: they are read as
    // spaces (the WebSocket URL, all that is used, has none).
    for byte in &mut body {
        if *byte < 0x20 {
            *byte = b' ';
        }
    }
    serde_json::from_slice::<Vec<ListedTarget>>(&body)
        .map_err(|e| ListError::NotInspector(format!("not a target list ({e})")))
}

/// The most of a target list read: a process has a handful of targets.
const LIST_LIMIT: u64 = 4 << 20;

fn describe_ureq(e: &ureq::Error) -> String {
    match e {
        ureq::Error::Io(io) => describe_io(io),
        ureq::Error::Timeout(_) => "no answer in time".to_owned(),
        other => other.to_string(),
    }
}

/// An I/O error as a short phrase ("connection refused", …).
pub(crate) fn describe_io(e: &io::Error) -> String {
    match e.kind() {
        io::ErrorKind::ConnectionRefused => "connection refused (nothing listens there)".to_owned(),
        io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock => "no answer in time".to_owned(),
        io::ErrorKind::ConnectionReset | io::ErrorKind::ConnectionAborted | io::ErrorKind::UnexpectedEof => {
            "the connection was closed".to_owned()
        }
        _ => e.to_string(),
    }
}

/// An error the inspector answered a command with.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct RemoteError {
    #[serde(default)]
    pub(crate) code: i64,
    #[serde(default)]
    pub(crate) message: String,
}

/// Why a command got no result.
#[derive(Debug)]
pub(crate) enum CallError {
    /// The inspector answered with an error.
    Remote(RemoteError),
    /// No answer before the deadline.
    Timeout,
    /// The connection is gone (the process exited, or closed its inspector).
    Closed,
    /// Something else broke: I/O, or a message that is not the protocol.
    Broken(String),
}

impl std::fmt::Display for CallError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CallError::Remote(e) => write!(f, "{} (code {})", e.message, e.code),
            CallError::Timeout => f.write_str("no answer in time"),
            CallError::Closed => f.write_str("the connection closed"),
            CallError::Broken(s) => f.write_str(s),
        }
    }
}

/// Why the WebSocket could not be opened.
#[derive(Debug)]
pub(crate) enum ConnectError {
    /// The TCP connection failed.
    Tcp(io::Error),
    /// The server refused the upgrade, with this HTTP status when it could be read (Node
    /// answers an unknown target id with `HTTP/1.0 400`, which tungstenite does not parse).
    Refused(Option<u16>),
    /// Anything else in the handshake.
    Handshake(String),
}

/// Who a command is for: the main thread or a worker's session.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum Key {
    Main(u64),
    Worker(String, u64),
}

/// An event of the `NodeWorker` domain.
#[derive(Debug)]
pub(crate) enum WorkerEvent {
    Attached { session_id: String, worker_id: String, url: String },
    Detached { session_id: String },
}

#[derive(Deserialize)]
struct Incoming {
    id: Option<u64>,
    method: Option<String>,
    result: Option<Box<RawValue>>,
    error: Option<RemoteError>,
    params: Option<Box<RawValue>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct FromWorker {
    session_id: String,
    message: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Attached {
    session_id: String,
    worker_info: WorkerInfo,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct WorkerInfo {
    #[serde(default)]
    worker_id: String,
    #[serde(default)]
    url: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Detached {
    session_id: String,
}

type Reply = Result<Box<RawValue>, RemoteError>;

/// A DevTools protocol session over the inspector's WebSocket.
pub(crate) struct Session {
    ws: WebSocket<TcpStream>,
    next_id: u64,
    replies: HashMap<Key, Reply>,
    /// The outer `NodeWorker.sendMessageToWorker` commands, by id, with the command they carry.
    tunnelled: HashMap<u64, Key>,
    events: VecDeque<WorkerEvent>,
    closed: bool,
    finished: bool,
}

impl Session {
    /// Connects to the WebSocket at `path` (`/<id>`) of the inspector at `addr`.
    pub(crate) fn connect(addr: SocketAddr, path: &str, timeout: Duration) -> Result<Session, ConnectError> {
        let stream = TcpStream::connect_timeout(&addr, timeout).map_err(ConnectError::Tcp)?;
        stream.set_read_timeout(Some(timeout)).map_err(ConnectError::Tcp)?;
        stream.set_write_timeout(Some(timeout)).map_err(ConnectError::Tcp)?;
        stream.set_nodelay(true).map_err(ConnectError::Tcp)?;
        let config = WebSocketConfig::default().max_message_size(Some(MAX_MESSAGE)).max_frame_size(Some(MAX_MESSAGE));
        let url = format!("ws://{addr}{path}");
        let (ws, _) =
            tungstenite::client::client_with_config(url.as_str(), stream, Some(config)).map_err(|e| match e {
                tungstenite::HandshakeError::Failure(tungstenite::Error::Http(response)) => {
                    ConnectError::Refused(Some(response.status().as_u16()))
                }
                tungstenite::HandshakeError::Failure(tungstenite::Error::Protocol(
                    tungstenite::error::ProtocolError::WrongHttpVersion,
                )) => ConnectError::Refused(None),
                tungstenite::HandshakeError::Failure(tungstenite::Error::Io(io)) => ConnectError::Tcp(io),
                tungstenite::HandshakeError::Failure(other) => ConnectError::Handshake(other.to_string()),
                tungstenite::HandshakeError::Interrupted(_) => {
                    ConnectError::Tcp(io::Error::from(io::ErrorKind::TimedOut))
                }
            })?;
        ws.get_ref().set_read_timeout(Some(POLL)).map_err(ConnectError::Tcp)?;
        Ok(Session {
            ws,
            next_id: 0,
            replies: HashMap::new(),
            tunnelled: HashMap::new(),
            events: VecDeque::new(),
            closed: false,
            finished: false,
        })
    }

    /// Sends a command to the main thread (`session` `None`) or to a worker's session; its
    /// reply is then waited for with [`Session::wait`].
    pub(crate) fn send(&mut self, session: Option<&str>, method: &str, params: &Value) -> Result<Key, CallError> {
        self.next_id += 1;
        let id = self.next_id;
        let message = json!({ "id": id, "method": method, "params": params });
        let key = match session {
            None => {
                self.write(message.to_string())?;
                Key::Main(id)
            }
            Some(session_id) => {
                // The outer command gets an id of its own; an error it gets (an unknown
                // session: the worker has ended) is the inner command's.
                self.next_id += 1;
                let outer = self.next_id;
                let key = Key::Worker(session_id.to_owned(), id);
                self.tunnelled.insert(outer, key.clone());
                let wrapped = json!({
                    "id": outer,
                    "method": "NodeWorker.sendMessageToWorker",
                    "params": { "sessionId": session_id, "message": message.to_string() },
                });
                self.write(wrapped.to_string())?;
                key
            }
        };
        Ok(key)
    }

    /// Sends a command and waits for its result until `deadline`.
    pub(crate) fn call(
        &mut self,
        session: Option<&str>,
        method: &str,
        params: &Value,
        deadline: Instant,
    ) -> Result<Box<RawValue>, CallError> {
        let key = self.send(session, method, params)?;
        self.wait(&key, deadline)
    }

    /// Waits until `deadline` for the reply of the command sent as `key`.
    pub(crate) fn wait(&mut self, key: &Key, deadline: Instant) -> Result<Box<RawValue>, CallError> {
        loop {
            if let Some(reply) = self.replies.remove(key) {
                return reply.map_err(CallError::Remote);
            }
            if self.closed {
                return Err(CallError::Closed);
            }
            if Instant::now() >= deadline {
                return Err(CallError::Timeout);
            }
            self.read_one()?;
        }
    }

    /// Reads what has arrived, for at most about [`POLL`].
    pub(crate) fn pump(&mut self) -> Result<(), CallError> {
        if self.closed {
            return Err(CallError::Closed);
        }
        // Bounded, so that a chatty target still lets the caller look at its stop flag.
        let until = Instant::now() + POLL;
        while self.read_one()? && Instant::now() < until {}
        Ok(())
    }

    /// The next `NodeWorker` event read, if any.
    pub(crate) fn next_event(&mut self) -> Option<WorkerEvent> {
        self.events.pop_front()
    }

    /// Whether Node said its program has finished and it only waits for the debugger to
    /// disconnect (`NodeRuntime.waitingForDisconnect`).
    pub(crate) fn finished(&self) -> bool {
        self.finished
    }

    /// Whether the other end has closed the connection.
    pub(crate) fn is_closed(&self) -> bool {
        self.closed
    }

    /// Closes the connection, waiting a little for the other end's close frame.
    pub(crate) fn close(mut self) {
        if self.closed {
            return;
        }
        if self.ws.close(None).is_err() {
            return;
        }
        let deadline = Instant::now() + Duration::from_secs(1);
        while Instant::now() < deadline {
            match self.ws.read() {
                Err(tungstenite::Error::Io(e)) if is_timeout(&e) => {}
                Ok(_) => {}
                Err(_) => return,
            }
        }
    }

    fn write(&mut self, text: String) -> Result<(), CallError> {
        if self.closed {
            return Err(CallError::Closed);
        }
        let mut result = self.ws.send(Message::text(text));
        // The message is queued; an interrupted or slow write is finished by flushing.
        let deadline = Instant::now() + WRITE_TIMEOUT;
        while let Err(tungstenite::Error::Io(e)) = &result {
            if !is_timeout(e) || Instant::now() >= deadline {
                break;
            }
            result = self.ws.flush();
        }
        result.map_err(|e| self.failure(e))
    }

    /// Reads one message, if one arrives within [`POLL`]; `Ok(false)` when none did.
    fn read_one(&mut self) -> Result<bool, CallError> {
        match self.ws.read() {
            Ok(Message::Text(text)) => {
                self.dispatch(text.as_str())?;
                Ok(true)
            }
            Ok(Message::Close(_)) => {
                self.closed = true;
                Err(CallError::Closed)
            }
            Ok(_) => Ok(true),
            Err(tungstenite::Error::Io(e)) if is_timeout(&e) => Ok(false),
            Err(e) => Err(self.failure(e)),
        }
    }

    fn failure(&mut self, e: tungstenite::Error) -> CallError {
        match e {
            tungstenite::Error::ConnectionClosed
            | tungstenite::Error::AlreadyClosed
            | tungstenite::Error::Protocol(tungstenite::error::ProtocolError::ResetWithoutClosingHandshake) => {
                self.closed = true;
                CallError::Closed
            }
            tungstenite::Error::Io(io)
                if matches!(
                    io.kind(),
                    io::ErrorKind::ConnectionReset
                        | io::ErrorKind::ConnectionAborted
                        | io::ErrorKind::BrokenPipe
                        | io::ErrorKind::UnexpectedEof
                ) =>
            {
                self.closed = true;
                CallError::Closed
            }
            other => CallError::Broken(other.to_string()),
        }
    }

    fn dispatch(&mut self, text: &str) -> Result<(), CallError> {
        let message: Incoming = serde_json::from_str(text)
            .map_err(|e| CallError::Broken(format!("the inspector sent a message that is not the protocol: {e}")))?;
        if let Some(id) = message.id {
            let reply = match (message.result, message.error) {
                (_, Some(error)) => Err(error),
                (Some(result), None) => Ok(result),
                (None, None) => Ok(empty_object()),
            };
            match self.tunnelled.remove(&id) {
                Some(inner) => {
                    if let Err(error) = reply {
                        self.replies.insert(inner, Err(error));
                    }
                }
                None => {
                    self.replies.insert(Key::Main(id), reply);
                }
            }
            return Ok(());
        }
        let Some(method) = message.method.as_deref() else { return Ok(()) };
        let params = message.params.unwrap_or_else(empty_object);
        let parse_error =
            |e: serde_json::Error| CallError::Broken(format!("a {method} event that is not the protocol: {e}"));
        match method {
            "NodeWorker.receivedMessageFromWorker" => {
                let from: FromWorker = serde_json::from_str(params.get()).map_err(parse_error)?;
                let inner: Incoming = serde_json::from_str(&from.message).map_err(parse_error)?;
                if let Some(id) = inner.id {
                    let reply = match (inner.result, inner.error) {
                        (_, Some(error)) => Err(error),
                        (Some(result), None) => Ok(result),
                        (None, None) => Ok(empty_object()),
                    };
                    self.replies.insert(Key::Worker(from.session_id, id), reply);
                }
            }
            "NodeWorker.attachedToWorker" => {
                let attached: Attached = serde_json::from_str(params.get()).map_err(parse_error)?;
                self.events.push_back(WorkerEvent::Attached {
                    session_id: attached.session_id,
                    worker_id: attached.worker_info.worker_id,
                    url: attached.worker_info.url,
                });
            }
            "NodeRuntime.waitingForDisconnect" => self.finished = true,
            "NodeWorker.detachedFromWorker" => {
                let detached: Detached = serde_json::from_str(params.get()).map_err(parse_error)?;
                self.events.push_back(WorkerEvent::Detached { session_id: detached.session_id });
            }
            _ => {}
        }
        Ok(())
    }
}

fn empty_object() -> Box<RawValue> {
    RawValue::from_string("{}".to_owned()).unwrap_or_else(|_| unreachable!("{{}} is JSON"))
}

/// Whether an I/O error only means "not now": a read or write timeout, or a signal (a socket
/// with a timeout is not restarted after a signal handler, SA_RESTART or not: Ctrl-C caught by
/// the caller interrupts the read).
fn is_timeout(e: &io::Error) -> bool {
    matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut | io::ErrorKind::Interrupted)
}
