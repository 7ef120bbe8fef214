//! Whether the host is shutting down, asked only when a TERM came from
//! outside (a task's ordinary end costs nothing): a clean shutdown or
//! reboot that ended the task is what its end must say afterwards
//! (`io/host-stopping`). `systemctl is-system-running` prints `stopping`
//! then. It is asked the moment that TERM comes, while the command ends, and
//! its answer is waited for until `host_ask_ms` after the TERM (default 4 s;
//! the systemd-scope placement gives its scope's stop timeout less a second,
//! so the scope's KILL never takes the shim before it wrote the code). On a
//! slow machine at a shutdown (a TCG guest on a loaded host) the answer took
//! over 3 s; asked only once the command had ended, it came too late. It asks
//! the system bus itself (dbus.rs) from a fork of its own, for the whole of
//! that time, and runs systemctl only where the bus fails outright (none
//! there, a denial, a surprise): systemctl asks the same manager over the
//! same bus, so a slow bus is not helped by it, and its exec alone took
//! seconds there. The only fork the shim makes besides the command. No
//! answer in time is written down (`io/host-unanswered`, saying how long it
//! was waited for), so the task's end says that it was asked and not
//! answered rather than nothing. Where systemd does not run the host (no
//! `/run/systemd/system`: a container with another init, a CI job's pid
//! namespace) nothing can say `stopping`, so nothing is asked: on a loaded
//! machine systemctl's exec alone outlasted the kill ladder's 2 s grace, and
//! the ladder's KILL took the shim while it waited, before it wrote the code.
//! Nor is it asked at the supervisor's own kill, which makes `io/kill-asked`
//! before its TERM (task.rs): the kill's record says how the task ended.

use crate::clock;
use crate::dbus;
use crate::settings::Command;
use crate::signals;
use crate::spawn::{self, Program};
use crate::sys;
use std::time::Duration;

/// How long the answer is waited for after the TERM where the settings do not say (`host_ask_ms`).
pub const ASK_WITHIN_MS: u64 = 4000;

/// What the host said when asked whether it is stopping.
#[derive(Debug, PartialEq, Eq)]
pub enum Answer {
    Stopping,
    /// Another state (`running`, `degraded`, ...): not a shutdown.
    Other,
    /// Nothing in time, or the asking ended without a word: why, in a line.
    None(String),
}

/// A `systemctl is-system-running` under way: its pid, the pipe it answers on, and until when it may take.
pub struct Asking {
    pid: libc::pid_t,
    answer: sys::Fd,
    until: Duration,
    /// The time it was given, for the words of an unanswered question.
    within_ms: u64,
    /// The main loop reaped it (it reaps every child): its pid may be anyone's now, and is never signalled.
    reaped: bool,
}

impl Asking {
    pub fn pid(&self) -> libc::pid_t {
        self.pid
    }

    pub fn reaped(&mut self) {
        self.reaped = true;
    }

    /// Its answer, waited for until its time is up; a line not finished by then is no answer.
    pub fn answer(mut self) -> Answer {
        let mut said = Vec::new();
        let mut timed_out = false;
        loop {
            let left = self.until.saturating_sub(clock::now());
            let mut p = [libc::pollfd {
                fd: self.answer.raw(),
                events: libc::POLLIN,
                revents: 0,
            }];
            if left.is_zero() {
                timed_out = true;
                break;
            }
            match sys::poll(&mut p, left.as_millis().max(1) as libc::c_int) {
                Ok(1) => {}
                Ok(_) => {
                    timed_out = true;
                    break;
                }
                Err(_) => break,
            }
            let mut buf = [0u8; 64];
            match sys::read(self.answer.raw(), &mut buf) {
                Ok(n) if n > 0 && said.len() < 256 => said.extend_from_slice(&buf[..n]),
                _ => break,
            }
        }
        self.finish();
        match said.strip_suffix(b"\n") {
            Some(b"stopping") => Answer::Stopping,
            Some(line) if !line.is_empty() => Answer::Other,
            _ if timed_out => Answer::None(format!(
                "no answer within {} ms of the TERM",
                self.within_ms
            )),
            _ => Answer::None("the asking ended without an answer".to_string()),
        }
    }

    /// Ended or not, it is reaped here, unless the main loop already did.
    fn finish(&mut self) {
        if !self.reaped {
            let _ = sys::kill(self.pid, libc::SIGKILL);
            sys::reap(self.pid);
            self.reaped = true;
        }
    }
}

/// Whether systemd runs this host, as sd_booted(3) tells: `/run/systemd/system` is a directory.
pub fn systemd_runs_host() -> bool {
    matches!(sys::stat(&sys::cstring(b"/run/systemd/system")), Ok(st) if sys::is_dir(&st))
}

/// Starts asking, now, to be answered within `within_ms`; None where it cannot be started (the answer is then no).
pub fn ask(bus: Option<&[u8]>, within_ms: u64) -> Option<Asking> {
    let until = clock::now() + Duration::from_millis(within_ms);
    let program = Program::new(&Command::Argv(vec![
        b"systemctl".to_vec(),
        b"is-system-running".to_vec(),
    ]));
    let argv = program.argv();
    let (answer, out) = match sys::pipe() {
        Ok(p) => p,
        Err(_) => return None,
    };
    let null = sys::open(&sys::cstring(b"/dev/null"), libc::O_WRONLY, 0);
    let pid = match sys::fork() {
        Ok(0) => {
            // First the system bus, straight from this fork (no exec, no dynamic linking: milliseconds where
            // systemctl's exec took seconds), for all the time there is; systemctl where the bus cannot be asked
            // (none, a denial, a surprise), with what time is left.
            match bus.map(|b| dbus::system_state(b, until.saturating_sub(clock::now()))) {
                Some(Ok(state)) => {
                    let mut line = state;
                    line.push(b'\n');
                    let _ = sys::write_all(out.raw(), &line);
                    sys::exit_now(0);
                }
                // Out of time: systemctl could not answer sooner than the bus it asks. Silent until the shim,
                // whose time ran out with this one's, KILLs it: an exit here could reach it first and read as
                // an asking that ended without an answer, not as none in time.
                Some(Err(why)) if why.contains(dbus::TIMED_OUT) => loop {
                    std::thread::sleep(Duration::from_secs(3600));
                },
                _ => {}
            }
            signals::reset_for_exec();
            let _ = sys::dup2(out.raw(), 1);
            if let Ok(null) = &null {
                let _ = sys::dup2(null.raw(), 2);
            }
            sys::close_from(3);
            spawn::exec(&program, &argv)
        }
        Ok(pid) => pid,
        Err(_) => return None,
    };
    drop(out);
    Some(Asking {
        pid,
        answer,
        until,
        within_ms,
        reaped: false,
    })
}
