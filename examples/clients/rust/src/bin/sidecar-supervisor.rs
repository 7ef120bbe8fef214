//! A supervisor of the user's own, in Rust, that keeps its background tasks
//! in `outlive serve`, started as its sidecar child: the server lives in the
//! supervisor's cgroup and dies with it, the tasks are placed outside it, and
//! the next supervisor's server replays them. This is the foreign module of
//! the harness scenario `sidecar-rust` (harness/cases/sidecar-rust.ts).
//!
//!     sidecar-supervisor [-- SERVE_COMMAND…]      (default: outlive serve)
//!
//! stdin:  `run ID SHELL…` · `drain REASON` (restart keeps the tasks; EOF: the parent went away)
//! stdout: `ready ROLE PLACEMENT adopted=ID,… finished=ID,…` · `started ID CGROUP` ·
//!         `completion ID STATE EXIT_CODE` (each terminal task; then acked) · `acked ID` ·
//!         `drained REASON` · `error WHAT`

use outlive_client::{Error, Server};
use serde_json::{json, Value};
use std::io::{BufRead, Write};
use std::process::ExitCode;
use std::sync::mpsc::{self, TryRecvError};
use std::time::Duration;

/// How long one wait for a notification lasts before stdin is looked at again: the bound on how
/// late a command from the parent is taken up while no completion comes.
const POLL: Duration = Duration::from_millis(20);

fn say(line: String) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}

fn ids(list: &Value, field: Option<&str>) -> String {
    let items = list.as_array().cloned().unwrap_or_default();
    items.iter().filter_map(|x| field.map_or(x, |f| &x[f]).as_str().map(String::from)).collect::<Vec<_>>().join(",")
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let serve: Vec<String> = match args.split_first() {
        None => vec!["outlive".into(), "serve".into()],
        Some((dashes, rest)) if dashes == "--" && !rest.is_empty() => rest.to_vec(),
        Some(_) => {
            eprintln!("sidecar-supervisor: Expected no arguments or `-- SERVE_COMMAND…` (e.g. `-- outlive serve --storage DIR`), got {args:?}");
            return ExitCode::from(2);
        }
    };
    match supervise(&serve) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            say(format!("error {e}"));
            ExitCode::FAILURE
        }
    }
}

fn supervise(serve: &[String]) -> Result<(), Error> {
    let mut server = Server::spawn(serve)?;
    let init = server.initialize("sidecar-supervisor")?;
    server.call("completions/subscribe", json!({}))?;
    let replay = &init["replay"];
    say(format!("ready {} {} adopted={} finished={}", init["role"].as_str().unwrap_or("?"), init["placement"]["name"].as_str().unwrap_or("?"), ids(&replay["adopted"], None), ids(&replay["finished"], Some("id"))));

    // Lines from the parent come through a thread, so one loop can wait on them and on the server.
    let (tx, commands) = mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::stdin().lock().lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    loop {
        if let Some(done) = server.next_notification("completion", POLL)? {
            let id = done["id"].as_str().unwrap_or("?").to_string();
            say(format!("completion {id} {} {}", done["state"].as_str().unwrap_or("?"), done["exitCode"]));
            // Acknowledged only once it was passed on: a kill before this line means it comes again.
            server.call("ack", json!({ "id": id }))?;
            say(format!("acked {id}"));
        }
        match commands.try_recv() {
            Ok(line) => {
                let mut words = line.splitn(3, ' ');
                match (words.next(), words.next(), words.next()) {
                    (Some("run"), Some(id), Some(shell)) => match server.call("run", json!({ "id": id, "shell": shell })) {
                        Ok(task) => say(format!("started {id} {}", task["location"]["cgroup"].as_str().unwrap_or("-"))),
                        Err(e) => say(format!("error run {id}: {e}")),
                    },
                    (Some("drain"), Some(reason), None) => {
                        server.drain(reason)?;
                        say(format!("drained {reason}"));
                        return Ok(());
                    }
                    _ => say(format!("error not a command: {line:?} (expected `run ID SHELL…` or `drain REASON`)")),
                }
            }
            Err(TryRecvError::Empty) => {}
            Err(TryRecvError::Disconnected) => return server.close(),
        }
    }
}
