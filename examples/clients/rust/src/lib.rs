//! A client of `outlive serve` in Rust: JSON-RPC 2.0, one JSON object a line
//! (MCP's stdio framing), on the stdin/stdout of a server this process starts
//! as its child, so the server lives and dies with it. The methods are in
//! docs/reference/wire-protocol.md, its use in docs/guide/other-languages.md.
//!
//! ```no_run
//! use outlive_client::Server;
//! use serde_json::json;
//! use std::time::Duration;
//! let mut server = Server::spawn(&["outlive", "serve", "--storage", "/tmp/s"]).unwrap();
//! server.initialize("my-tool").unwrap();
//! server.call("completions/subscribe", json!({})).unwrap();
//! let task = server.call("run", json!({ "shell": "make test" })).unwrap();
//! let done = server.next_notification("completion", Duration::from_secs(600)).unwrap().unwrap();
//! server.call("ack", json!({ "id": done["id"] })).unwrap();
//! # let _ = task;
//! ```

use serde_json::{json, Value};
use std::collections::VecDeque;
use std::fmt;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::thread;
use std::time::{Duration, Instant};

pub const PROTOCOL_VERSION: &str = "1";

/// How long a request waits for its answer unless the caller says otherwise: long
/// enough for a server on a loaded machine to open its storage and replay, short
/// enough that a server gone silent is reported rather than waited on for ever.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

#[derive(Debug)]
pub enum Error {
    /// A JSON-RPC error object; `data.code` is outlive's own (E_NO_TASK, …).
    Rpc { method: String, code: i64, message: String, data: Value },
    /// The server's stdout ended (it exited or was killed) before the answer came.
    Gone(String),
    Timeout(String),
    Io(std::io::Error),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Rpc { method, code, message, data } => {
                let own = data.get("code").and_then(Value::as_str).map(|c| format!(", {c}")).unwrap_or_default();
                write!(f, "{method}: {message} (JSON-RPC error {code}{own})")
            }
            Error::Gone(what) | Error::Timeout(what) => f.write_str(what),
            Error::Io(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for Error {}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Self {
        Error::Io(e)
    }
}

/// One `outlive serve` child process and the JSON-RPC session on its stdio.
pub struct Server {
    child: Child,
    stdin: Option<ChildStdin>,
    incoming: Receiver<Value>,
    next_id: u64,
    /// Notifications that came while a request waited for its answer, kept for the next wait on them.
    held: VecDeque<Value>,
    gone: bool,
}

impl Server {
    /// Starts `argv` (the outlive command and `serve …`) with piped stdin/stdout; its stderr is this process's.
    pub fn spawn<S: AsRef<str>>(argv: &[S]) -> Result<Server, Error> {
        let (program, args) = argv.split_first().ok_or_else(|| Error::Gone("no server command given".into()))?;
        let mut child = Command::new(program.as_ref())
            .args(args.iter().map(AsRef::as_ref))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()?;
        let stdout = child.stdout.take().expect("piped stdout");
        let (tx, incoming) = mpsc::channel();
        // The reader thread ends at EOF; dropping its sender is how the session learns the server is gone.
        thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                // The protocol says every line is JSON; a stray one is skipped rather than guessed at.
                if let Ok(message) = serde_json::from_str::<Value>(&line) {
                    if tx.send(message).is_err() {
                        break;
                    }
                }
            }
        });
        Ok(Server { stdin: child.stdin.take(), child, incoming, next_id: 1, held: VecDeque::new(), gone: false })
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Sends a request and waits, bounded by [`DEFAULT_TIMEOUT`], for its result.
    pub fn call(&mut self, method: &str, params: Value) -> Result<Value, Error> {
        self.call_within(method, params, DEFAULT_TIMEOUT)
    }

    pub fn call_within(&mut self, method: &str, params: Value, timeout: Duration) -> Result<Value, Error> {
        let id = self.next_id;
        self.next_id += 1;
        let line = json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }).to_string() + "\n";
        let stdin = self.stdin.as_mut().ok_or_else(|| Error::Gone(format!("{method}: the server's stdin is closed")))?;
        stdin
            .write_all(line.as_bytes())
            .and_then(|_| stdin.flush())
            .map_err(|e| Error::Gone(format!("{method}: could not write to the server (pid {}): {e}", self.child.id())))?;
        let deadline = Instant::now() + timeout;
        loop {
            let message = self.receive(deadline, method)?;
            if message.get("id").and_then(Value::as_u64) == Some(id) {
                if let Some(error) = message.get("error") {
                    return Err(Error::Rpc {
                        method: method.to_string(),
                        code: error["code"].as_i64().unwrap_or(0),
                        message: error["message"].as_str().unwrap_or("").to_string(),
                        data: error.get("data").cloned().unwrap_or(Value::Null),
                    });
                }
                return Ok(message.get("result").cloned().unwrap_or(Value::Null));
            }
            if message.get("method").is_some() && message.get("id").is_none() {
                self.held.push_back(message);
            }
        }
    }

    fn receive(&mut self, deadline: Instant, what: &str) -> Result<Value, Error> {
        if self.gone {
            return Err(Error::Gone(format!("{what}: the server (pid {}) has exited", self.child.id())));
        }
        match self.incoming.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
            Ok(message) => Ok(message),
            Err(RecvTimeoutError::Timeout) => Err(Error::Timeout(format!("{what}: nothing from the server within the bound"))),
            Err(RecvTimeoutError::Disconnected) => {
                self.gone = true;
                Err(Error::Gone(format!("{what}: the server (pid {}) exited", self.child.id())))
            }
        }
    }

    /// The first request on every connection: agrees on the protocol version and says what replay found.
    pub fn initialize(&mut self, client_name: &str) -> Result<Value, Error> {
        self.call("initialize", json!({ "protocolVersion": PROTOCOL_VERSION, "clientInfo": { "name": client_name, "version": env!("CARGO_PKG_VERSION") } }))
    }

    /// The params of the next notification of `method`, or None when none came within `timeout`.
    pub fn next_notification(&mut self, method: &str, timeout: Duration) -> Result<Option<Value>, Error> {
        if let Some(i) = self.held.iter().position(|m| m["method"] == method) {
            return Ok(self.held.remove(i).map(|m| m["params"].clone()));
        }
        let deadline = Instant::now() + timeout;
        loop {
            match self.receive(deadline, &format!("waiting for {method}")) {
                Ok(message) if message["method"] == method => return Ok(Some(message["params"].clone())),
                Ok(message) if message.get("method").is_some() => self.held.push_back(message),
                Ok(_) => {} // an answer to a request that timed out earlier
                Err(Error::Timeout(_)) => return Ok(None),
                Err(e) => return Err(e),
            }
        }
    }

    /// SIGKILL, as a crash or the OOM killer would end it: no drain, no goodbye.
    pub fn kill(&mut self) -> Result<(), Error> {
        self.child.kill()?;
        self.child.wait()?;
        Ok(())
    }

    /// `drain` with a reason (restart keeps every task running), then waits for the server to exit.
    pub fn drain(&mut self, reason: &str) -> Result<(), Error> {
        self.call("drain", json!({ "reason": reason }))?;
        self.close()
    }

    /// Closes its stdin (the parent went away) and waits, bounded by [`DEFAULT_TIMEOUT`], for it to exit; SIGKILL after that.
    pub fn close(&mut self) -> Result<(), Error> {
        drop(self.stdin.take());
        let deadline = Instant::now() + DEFAULT_TIMEOUT;
        while self.child.try_wait()?.is_none() {
            if Instant::now() > deadline {
                self.kill()?;
                return Err(Error::Timeout(format!("the server (pid {}) did not exit within {:?} of its stdin closing", self.child.id(), DEFAULT_TIMEOUT)));
            }
            thread::sleep(Duration::from_millis(20));
        }
        Ok(())
    }
}

impl Drop for Server {
    /// A server is its parent's child: it never outlives the value that started it.
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}
