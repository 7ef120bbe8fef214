//! Starting the command: one fork, in the shim's own process group, and an
//! exec that is exactly execvp's (PATH of the environment the command gets,
//! a file without a `#!` run by /bin/sh), with the words a shell would say
//! when it cannot: `outlive: NAME: not found` (127) or `outlive: NAME:
//! permission denied` (126), one line on the task's stderr.

use crate::pty::Slave;
use crate::settings::Command;
use crate::signals;
use crate::sys;
use std::ffi::{CString, OsString};
use std::io;
use std::os::unix::ffi::OsStringExt;

/// What runs, as exec will be handed it.
pub struct Program {
    argv: Vec<CString>,
    /// Where execvp would look for it, in its order.
    candidates: Vec<CString>,
}

impl Program {
    pub fn new(command: &Command) -> Program {
        let argv: Vec<Vec<u8>> = match command {
            Command::Argv(argv) => argv.clone(),
            // `--`: a script that begins with `-` is the command, not options to the shell.
            Command::Shell { shell, script } => vec![
                shell.clone(),
                b"-c".to_vec(),
                b"--".to_vec(),
                script.clone(),
            ],
        };
        let candidates = search(&argv[0], std::env::var_os("PATH"));
        Program {
            argv: argv.iter().map(|a| sys::cstring(a)).collect(),
            candidates,
        }
    }

    /// The argv as exec takes it; it cannot outlive the Program.
    pub fn argv(&self) -> sys::Argv<'_> {
        sys::Argv::new(self.argv.iter().map(|a| a.as_c_str()))
    }
}

/// The paths execvp tries for `name`: the name itself when it holds a `/`,
/// else each directory of PATH in turn (an empty one is the current
/// directory; glibc's `/bin:/usr/bin` when PATH is unset). An empty name is
/// found nowhere.
fn search(name: &[u8], path: Option<OsString>) -> Vec<CString> {
    if name.is_empty() {
        return Vec::new();
    }
    if name.contains(&b'/') {
        return vec![sys::cstring(name)];
    }
    let path = path
        .map(|p| p.into_vec())
        .unwrap_or_else(|| b"/bin:/usr/bin".to_vec());
    path.split(|&b| b == b':')
        .map(|dir| sys::join(if dir.is_empty() { b"." } else { dir }, name))
        .collect()
}

/// What the child does before it becomes the command.
pub struct Start<'a> {
    pub program: &'a Program,
    /// `io/command-pid.tmp` and `io/command-pid`, when the command's pid is to be written.
    pub command_pid: Option<&'a (CString, CString)>,
    /// The terminal it is to run on (a PTY task).
    pub terminal: Option<&'a Slave>,
}

/// Forks the command; returns its pid.
pub fn start(s: &Start) -> io::Result<libc::pid_t> {
    // Made before the fork, so the child only has to hand them to exec.
    let argv = s.program.argv();
    let pid = sys::fork()?;
    if pid == 0 {
        child(s, &argv);
    }
    Ok(pid)
}

fn child(s: &Start, argv: &sys::Argv) -> ! {
    signals::reset_for_exec();
    if let Some(terminal) = s.terminal {
        if let Err(why) = terminal.enter() {
            crate::say(&format!(
                "outlive: could not set up the task's terminal: {}",
                why
            ));
            sys::exit_now(125);
        }
    }
    // The exit marker is the shim's alone, and so is everything else above 2 (close-on-exec as it all is,
    // but a caller may have left a descriptor of its own open).
    sys::close_from(3);
    if let Some((tmp, path)) = s.command_pid {
        // Renamed into place, so a reader sees this attempt's whole line or the one before: never half.
        let _ = sys::replace_file(tmp, path, format!("{}\n", sys::getpid()).as_bytes(), 0o666);
    }
    exec(s.program, argv)
}

/// Becomes the program, or says why not on fd 2 and exits 127 (not found) or 126.
pub fn exec(p: &Program, argv: &sys::Argv) -> ! {
    let mut denied = false;
    let mut failed = None;
    for path in &p.candidates {
        match sys::execve(path, argv) {
            libc::ENOEXEC => {
                // As execvp does: a file with no `#!` line is a script for /bin/sh.
                let sh = sys::cstring(b"/bin/sh");
                let words = [sh.as_c_str(), path.as_c_str()];
                let again = sys::Argv::new(
                    words
                        .into_iter()
                        .chain(p.argv[1..].iter().map(|a| a.as_c_str())),
                );
                failed = Some(sys::execve(&sh, &again));
                break;
            }
            libc::EACCES => denied = true,
            libc::ENOENT | libc::ENOTDIR | libc::ESTALE | libc::ENODEV | libc::ETIMEDOUT => {}
            other => {
                failed = Some(other);
                break;
            }
        }
    }
    let (code, what) = match failed {
        Some(errno) => (126, lowercase_first(sys::strerror(errno))),
        None if denied => (126, "permission denied".to_string()),
        None => (127, "not found".to_string()),
    };
    let mut line = b"outlive: ".to_vec();
    line.extend_from_slice(p.argv[0].as_bytes());
    line.extend_from_slice(format!(": {}\n", what).as_bytes());
    let _ = sys::write_all(2, &line);
    sys::exit_now(code)
}

fn lowercase_first(s: String) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(first) => first.to_lowercase().chain(c).collect(),
        None => s,
    }
}
