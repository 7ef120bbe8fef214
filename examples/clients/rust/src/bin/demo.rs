//! outlive's promises, checked from Rust through `outlive serve`.
//!
//!     demo --storage DIR [--mode standalone] [--timeout-seconds 30] [--settle-ms 500] [-- OUTLIVE_COMMAND…]
//!
//! Runs a task and receives its completion; runs a second task and SIGKILLs
//! the server while it runs; starts a new server and receives that task's
//! completion exactly once, with its real exit code (7), and acks it; then a
//! third server must send no completion for anything acknowledged. Prints a
//! short report, then one JSON line (the last line of stdout), and exits 1 on
//! any broken promise. OUTLIVE_COMMAND defaults to `outlive` (on PATH).

use outlive_client::{Error, Server};
use serde_json::{json, Value};
use std::path::Path;
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// The survivor's exit code: distinctive, so a code made up by a replay (0, 1, 137) cannot pass for it.
const SURVIVOR_EXIT_CODE: i64 = 7;

struct Options {
    storage: String,
    mode: Option<String>,
    timeout: Duration,
    settle: Duration,
    outlive: Vec<String>,
}

fn parse_options() -> Result<Options, String> {
    let mut args = std::env::args().skip(1);
    let mut o = Options { storage: String::new(), mode: None, timeout: Duration::from_secs(30), settle: Duration::from_millis(500), outlive: vec![] };
    let number = |flag: &str, v: Option<String>| -> Result<u64, String> {
        let v = v.ok_or(format!("{flag} needs a value"))?;
        v.parse().map_err(|_| format!("Expected {flag} to be a non-negative integer, got {v:?}"))
    };
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--storage" => o.storage = args.next().ok_or("--storage needs a directory")?,
            "--mode" => o.mode = Some(args.next().ok_or("--mode needs a value")?),
            "--timeout-seconds" => o.timeout = Duration::from_secs(number("--timeout-seconds", args.next())?),
            "--settle-ms" => o.settle = Duration::from_millis(number("--settle-ms", args.next())?),
            "--" => o.outlive = args.by_ref().collect(),
            other => return Err(format!("unknown argument {other:?}; usage: demo --storage DIR [--mode M] [--timeout-seconds N] [--settle-ms N] [-- OUTLIVE_COMMAND…]")),
        }
    }
    if o.storage.is_empty() {
        return Err("Expected --storage DIR (the storage every server of the demo opens)".into());
    }
    if o.outlive.is_empty() {
        o.outlive = vec!["outlive".into()];
    }
    Ok(o)
}

struct Demo {
    serve: Vec<String>,
    timeout: Duration,
    settle: Duration,
    servers: Vec<Value>,
    deliveries: Vec<Value>,
    problems: Vec<String>,
}

impl Demo {
    fn start_server(&mut self) -> Result<(usize, Server), Error> {
        let mut server = Server::spawn(&self.serve)?;
        let init = server.initialize("outlive-rust-demo")?;
        server.call("completions/subscribe", json!({}))?;
        let n = self.servers.len() + 1;
        self.servers.push(json!({ "n": n, "pid": server.pid(), "role": init["role"], "protocolVersion": init["protocolVersion"], "placement": init["placement"], "replay": init["replay"] }));
        Ok((n, server))
    }

    fn record(&mut self, n: usize, r: &Value) {
        self.deliveries.push(json!({ "server": n, "id": r["id"], "state": r["state"], "exitCode": r["exitCode"] }));
    }

    /// Waits for `id`'s completion on server n; every completion seen on the way is a delivery too.
    fn completion_of(&mut self, n: usize, server: &mut Server, id: &Value) -> Result<Option<Value>, Error> {
        let deadline = Instant::now() + self.timeout;
        while let Some(r) = server.next_notification("completion", deadline.saturating_duration_since(Instant::now()))? {
            self.record(n, &r);
            if &r["id"] == id {
                return Ok(Some(r));
            }
        }
        self.problems.push(format!("server {n} sent no completion for {id} within {:?}", self.timeout));
        Ok(None)
    }

    /// Listens a little longer, so a late duplicate is seen rather than missed.
    fn settle_on(&mut self, n: usize, server: &mut Server) -> Result<(), Error> {
        let deadline = Instant::now() + self.settle;
        while let Some(r) = server.next_notification("completion", deadline.saturating_duration_since(Instant::now()))? {
            self.record(n, &r);
        }
        Ok(())
    }

    fn expect(&mut self, ok: bool, problem: String) {
        if !ok {
            self.problems.push(problem);
        }
    }
}

/// A string as itself, anything else as JSON: for the report a person reads.
fn text(v: &Value) -> String {
    v.as_str().map(String::from).unwrap_or_else(|| v.to_string())
}

fn exited_with(r: &Option<Value>, code: i64) -> bool {
    matches!(r, Some(r) if r["state"] == "exited" && r["exitCode"] == code)
}

fn run(demo: &mut Demo, scratch: &Path, tasks: &mut serde_json::Map<String, Value>, report: &mut serde_json::Map<String, Value>) -> Result<(), Error> {
    // Server 1: a task runs and its completion arrives, with its exit code.
    let (n, mut server) = demo.start_server()?;
    let first = server.call("run", json!({ "shell": "echo first; exit 3" }))?;
    tasks.insert("first".into(), first["id"].clone());
    let done = demo.completion_of(n, &mut server, &first["id"])?;
    demo.expect(exited_with(&done, 3), format!("first task: expected exited 3, got {done:?}"));
    server.call("ack", json!({ "id": first["id"] }))?;
    // outlive's own failures are JSON-RPC errors whose data says which (E_NO_TASK, …).
    let unknown = match server.call("get", json!({ "id": "no-such-task" })) {
        Err(Error::Rpc { code, data, .. }) => json!({ "code": code, "dataCode": data["code"] }),
        Err(e) => return Err(e),
        Ok(_) => Value::Null,
    };
    demo.expect(unknown == json!({ "code": -32000, "dataCode": "E_NO_TASK" }), format!("get of an unknown id: expected error -32000 E_NO_TASK, got {unknown}"));
    report.insert("unknownTaskError".into(), unknown);

    // A second task, still running when the server is SIGKILLed; it exits 7 only after the kill.
    let (started, release) = (scratch.join("started"), scratch.join("release"));
    let shell = format!("touch '{}'; while [ ! -e '{}' ]; do sleep 0.05; done; exit {SURVIVOR_EXIT_CODE}", started.display(), release.display());
    let survivor = server.call("run", json!({ "shell": shell }))?;
    tasks.insert("survivor".into(), survivor["id"].clone());
    let deadline = Instant::now() + demo.timeout;
    while !started.exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    let state = server.call("get", json!({ "id": survivor["id"] }))?["state"].clone();
    demo.expect(state == "running", format!("survivor: expected running before the kill, got {state}"));
    report.insert("survivorStateAtKill".into(), state);
    demo.settle_on(n, &mut server)?;
    server.kill()?;
    std::fs::write(&release, "")?;

    // Server 2: the survivor's completion, once, with its real exit code; then the ack.
    let (n, mut server) = demo.start_server()?;
    let done = demo.completion_of(n, &mut server, &survivor["id"])?;
    demo.expect(exited_with(&done, SURVIVOR_EXIT_CODE), format!("survivor: expected exited {SURVIVOR_EXIT_CODE} after the restart, got {done:?}"));
    let acked = server.call("ack", json!({ "id": survivor["id"] }))?;
    report.insert("ackedAt".into(), acked["acknowledgedAt"].clone());
    // A task run after the ack marks the point by which any duplicate would have come.
    let marker = server.call("run", json!({ "argv": ["true"] }))?;
    tasks.insert("marker2".into(), marker["id"].clone());
    demo.completion_of(n, &mut server, &marker["id"])?;
    server.call("ack", json!({ "id": marker["id"] }))?;
    demo.settle_on(n, &mut server)?;
    server.drain("restart")?;

    // Server 3: everything acknowledged stays acknowledged.
    let (n, mut server) = demo.start_server()?;
    let marker = server.call("run", json!({ "argv": ["true"] }))?;
    tasks.insert("marker3".into(), marker["id"].clone());
    demo.completion_of(n, &mut server, &marker["id"])?;
    server.call("ack", json!({ "id": marker["id"] }))?;
    demo.settle_on(n, &mut server)?;
    server.drain("restart")?;
    Ok(())
}

/// The promises, from the deliveries alone.
fn judge(demo: &mut Demo, tasks: &serde_json::Map<String, Value>) {
    let of = |d: &[Value], key: &str| -> Vec<Value> { d.iter().filter(|x| Some(&x["id"]) == tasks.get(key)).cloned().collect() };
    let survivor = of(&demo.deliveries, "survivor");
    demo.expect(survivor.len() == 1, format!("survivor: expected exactly one completion, got {}: {survivor:?}", survivor.len()));
    demo.expect(survivor.iter().all(|d| d["server"] == 2), format!("survivor: expected its completion from the server started after the kill, got {survivor:?}"));
    let first = of(&demo.deliveries, "first");
    demo.expect(first.len() == 1 && first[0]["server"] == 1, format!("first task: expected one completion, from server 1, got {first:?}"));
    let late: Vec<&Value> = demo.deliveries.iter().filter(|d| d["server"] == 3 && Some(&d["id"]) != tasks.get("marker3")).collect();
    demo.expect(late.is_empty(), format!("server 3 sent completions of acknowledged tasks: {late:?}"));
    let unknown: Vec<&Value> = demo.deliveries.iter().filter(|d| !tasks.values().any(|id| id == &d["id"])).collect();
    demo.expect(unknown.is_empty(), format!("completions of tasks this demo never ran: {unknown:?}"));
}

fn main() -> ExitCode {
    let o = match parse_options() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("demo: {e}");
            return ExitCode::from(2);
        }
    };
    let mut serve = o.outlive.clone();
    serve.extend(["serve".to_string(), "--storage".to_string(), o.storage.clone()]);
    if let Some(mode) = &o.mode {
        serve.extend(["--mode".to_string(), mode.clone()]);
    }
    let mut demo = Demo { serve, timeout: o.timeout, settle: o.settle, servers: vec![], deliveries: vec![], problems: vec![] };
    let scratch = std::env::temp_dir().join(format!("outlive-rust-demo-{}", std::process::id()));
    let (mut tasks, mut report) = (serde_json::Map::new(), serde_json::Map::new());
    let outcome = std::fs::create_dir_all(&scratch).map_err(Error::from).and_then(|_| run(&mut demo, &scratch, &mut tasks, &mut report));
    let _ = std::fs::remove_dir_all(&scratch);
    match outcome {
        Ok(()) => judge(&mut demo, &tasks),
        Err(e) => demo.problems.push(e.to_string()),
    }
    let ok = demo.problems.is_empty();
    println!("outlive from Rust: {}", if ok { "every promise held" } else { "BROKEN PROMISES" });
    for s in &demo.servers {
        let finished: Vec<String> = s["replay"]["finished"].as_array().map(|f| f.iter().map(|x| text(&x["id"])).collect()).unwrap_or_default();
        println!("  server {} (pid {}, {}): replay adopted {}, finished {finished:?}", s["n"], s["pid"], text(&s["role"]), s["replay"]["adopted"]);
    }
    for d in &demo.deliveries {
        let name = tasks.iter().find(|(_, v)| *v == &d["id"]).map(|(k, _)| k.clone()).unwrap_or_else(|| d["id"].to_string());
        println!("  completion from server {}: {name} {} {}", d["server"], text(&d["state"]), d["exitCode"]);
    }
    for p in &demo.problems {
        println!("  PROBLEM: {p}");
    }
    report.insert("client".into(), json!("rust"));
    report.insert("ok".into(), json!(ok));
    report.insert("tasks".into(), Value::Object(tasks));
    report.insert("servers".into(), json!(demo.servers));
    report.insert("deliveries".into(), json!(demo.deliveries));
    report.insert("problems".into(), json!(demo.problems));
    println!("{}", Value::Object(report));
    if ok { ExitCode::SUCCESS } else { ExitCode::FAILURE }
}
