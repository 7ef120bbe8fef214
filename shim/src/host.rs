//! Whether the host is shutting down, asked only when a TERM came from
//! outside (a task's ordinary end costs nothing): a clean shutdown or
//! reboot that ended the task is what its end must say afterwards
//! (`io/host-stopping`). `systemctl is-system-running` prints `stopping`
//! then. Bounded at 3 s, under a scope's default 5 s between TERM and KILL
//! (at a shutdown on a slow machine the answer took over a second); the
//! only fork the shim makes besides the command.

use crate::clock;
use crate::settings::Command;
use crate::signals;
use crate::spawn::{self, Program};
use crate::sys;
use std::time::Duration;

const ASK_WITHIN: Duration = Duration::from_secs(3);

pub fn is_stopping() -> bool {
    let program = Program::new(&Command::Argv(vec![b"systemctl".to_vec(), b"is-system-running".to_vec()]));
    let argv = program.pointers();
    let (answer, out) = match sys::pipe() {
        Ok(p) => p,
        Err(_) => return false,
    };
    let null = sys::open(&sys::cstring(b"/dev/null"), libc::O_WRONLY, 0);
    let pid = match sys::fork() {
        Ok(0) => {
            signals::reset_for_exec();
            let _ = sys::dup2(out.raw(), 1);
            if let Ok(null) = &null {
                let _ = sys::dup2(null.raw(), 2);
            }
            sys::close_from(3);
            spawn::exec(&program, &argv)
        }
        Ok(pid) => pid,
        Err(_) => return false,
    };
    drop(out);
    let mut said = Vec::new();
    let until = clock::now() + ASK_WITHIN;
    loop {
        let left = until.saturating_sub(clock::now());
        let mut p = [libc::pollfd { fd: answer.raw(), events: libc::POLLIN, revents: 0 }];
        if left.is_zero() || !matches!(sys::poll(&mut p, left.as_millis().max(1) as libc::c_int), Ok(1)) {
            break;
        }
        let mut buf = [0u8; 64];
        match sys::read(answer.raw(), &mut buf) {
            Ok(n) if n > 0 && said.len() < 256 => said.extend_from_slice(&buf[..n]),
            _ => break,
        }
    }
    // Ended or not, it is reaped here, not left to the main loop's reaping.
    let _ = sys::kill(pid, libc::SIGKILL);
    sys::reap(pid);
    said.strip_suffix(b"\n").unwrap_or(&said) == b"stopping"
}
