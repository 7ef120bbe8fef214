//! outlive-shim: the process that stands between outlive and one task's
//! command, as conmon or tini do for a container. `outlive-shim TASK-ID`,
//! with the task's settings on stdin (settings.rs); fd 1 and 2 are the
//! task's `io/stdout` and `io/stderr`, fd 3 its exit marker `io/exit`.
//!
//! It leads the task's process group, starts the command in it (spawn.rs),
//! keeps the output bounded (bound.rs), ends the task at its deadline
//! (deadline.rs), holds a PTY task's terminal (pty.rs), runs the command
//! again under a restart policy (restart.rs), and records how the task ended
//! (marker.rs), whatever signals the group is sent. It is single-threaded
//! and waits on descriptors only (events.rs): a quiet task costs nothing.
//! Its contract with the library is lib/spawn/shim-settings.ts.
//!
//! Single-threaded is a promise the `unsafe` blocks rely on (sys.rs says
//! which): nothing here starts a thread, and nothing may.

// Every `unsafe` block says why it is sound; `cargo clippy` refuses one that does not (rustc alone ignores this).
#![deny(clippy::undocumented_unsafe_blocks)]

mod bound;
mod clock;
mod dbus;
mod deadline;
mod events;
mod host;
mod limits;
mod marker;
mod pty;
mod restart;
mod settings;
mod signals;
mod spawn;
mod sys;
mod task;

use std::ffi::OsString;
use std::os::unix::ffi::OsStrExt;

/// One line of the shim's own on the task's stderr.
pub fn say(line: &str) {
    let _ = sys::write_all(2, format!("{}\n", line).as_bytes());
}

/// Nothing of the user's has run: say why (on stderr, and in `io/shim-refused`) and exit 125, leaving no exit marker.
pub fn fail(what: &str) -> ! {
    let line = format!("outlive-shim: {}", what);
    say(&line);
    marker::refused(&line);
    std::process::exit(125)
}

fn main() {
    // First, so no signal sent to the group can end the shim before it has recorded an end.
    signals::block_all();
    let start = clock::now();
    let args: Vec<OsString> = std::env::args_os().collect();
    if args.len() != 2 || args[1].is_empty() {
        fail("usage: outlive-shim TASK-ID, with the task's settings on stdin");
    }
    named_as_shim(&args);
    let input = settings::read(0).unwrap_or_else(|e| fail(&e));
    let s = settings::parse(&input, args[1].as_bytes()).unwrap_or_else(|e| fail(&e));
    drop(input);
    marker::check_fd().unwrap_or_else(|e| fail(&e));
    // The command's stdin is nothing, as every task's has been; the settings' pipe is done with.
    match sys::open(&sys::cstring(b"/dev/null"), libc::O_RDONLY, 0) {
        Ok(null) => {
            sys::dup2(null.raw(), 0).unwrap_or_else(|e| fail(&format!("stdin: {}", sys::why(&e))))
        }
        Err(e) => fail(&format!("/dev/null: {}", sys::why(&e))),
    }
    if let Some(procs) = &s.enter {
        join_cgroup(procs);
    }
    sys::lead_group()
        .unwrap_or_else(|e| fail(&format!("could not lead a process group: {}", sys::why(&e))));
    task::Task::new(s, start).run()
}

/// The name `ps`, `top` and the journal show: `outlive-shim TASK-ID`, never a path a person must read past.
/// A caller that can set argv[0] starts the shim so; one that cannot (systemd-run, which execs the path it is
/// given) starts it by its path, and the shim execs itself once more under its name, before it reads a byte of
/// its settings: the same process, the same descriptors and blocked signals, about a millisecond later. The
/// binary's real path, not /proc/self/exe, so the kernel's name for the process (`comm`) is `outlive-shim` too.
/// Where that cannot be done the shim runs on under its path: nothing but the name is lost.
fn named_as_shim(args: &[OsString]) {
    const NAME: &[u8] = b"outlive-shim";
    if args[0].as_bytes() == NAME {
        return;
    }
    let exe = match std::fs::read_link("/proc/self/exe") {
        Ok(path) => path,
        Err(_) => return,
    };
    let path = sys::cstring(exe.as_os_str().as_bytes());
    let name = sys::cstring(NAME);
    let id = sys::cstring(args[1].as_bytes());
    sys::execve(&path, &sys::Argv::new([name.as_c_str(), id.as_c_str()]));
}

/// Into the task's cgroup before anything of the user's runs: a task never runs outside the cgroup it was promised.
fn join_cgroup(procs: &[u8]) {
    let path = sys::cstring(procs);
    let wrote = sys::open(&path, libc::O_WRONLY, 0)
        .and_then(|fd| sys::write_all(fd.raw(), format!("{}\n", sys::getpid()).as_bytes()));
    if let Err(e) = wrote {
        fail(&format!(
            "enter: could not join the task's cgroup through {}: {}",
            settings::shown(procs),
            sys::why(&e)
        ));
    }
}
