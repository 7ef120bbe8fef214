//! The life of one task: start the command, answer what happens (its end,
//! a TERM, the deadline, output, the terminal), and record the end once.
//!
//! - A TERM from outside (the kill ladder's group TERM, systemd stopping a
//!   scope) reached the command too; the shim only notes that it came, ends
//!   any restart policy, and stays to record the code. Its own group TERM at
//!   the deadline reaches it as well and is told apart by the sender's pid.
//! - A PTY task's command leads a session of its own, out of reach of the
//!   group's signals: a TERM hangs its terminal up (SIGHUP to the session
//!   leader), as closing a terminal window does, once an attempt.
//! - The end: `io/ended`, then `io/host-stopping` if a TERM came from
//!   outside while the host was shutting down (or `io/host-unanswered` if
//!   that was not answered in time), then a last look at the
//!   output, then the code in `io/exit`, then exit with that code. After a
//!   deadline the shim stays until the grace is over and KILLs the group,
//!   itself with it, even when the command ended within the grace.

use crate::bound::Bound;
use crate::clock::Timer;
use crate::deadline::{self, Deadline, Due};
use crate::events::{Poller, Source};
use crate::host;
use crate::limits;
use crate::marker;
use crate::pty::{self, Terminal};
use crate::restart::{Attempts, Policy};
use crate::settings::{Settings, Watch};
use crate::signals::Signals;
use crate::spawn::{self, Program, Start};
use crate::sys;
use std::ffi::CString;
use std::time::Duration;

#[derive(Clone, Copy, PartialEq)]
enum Phase {
    /// The command runs as this pid; `hung_up` once its terminal was hung up.
    Running { pid: libc::pid_t, hung_up: bool },
    /// Between two attempts of a restart policy.
    Waiting,
    /// The exit code is written; only the grace after a deadline is left.
    Ended,
}

pub struct Task {
    io: Vec<u8>,
    me: libc::pid_t,
    program: Program,
    command_pid: Option<(CString, CString)>,
    signals: Signals,
    deadline: Option<Deadline>,
    bound: Option<Bound>,
    terminal: Option<Terminal>,
    policy: Option<Policy>,
    attempts: Option<Attempts>,
    restart_timer: Option<Timer>,
    phase: Phase,
    term_from_outside: bool,
    /// Whether the host is stopping, asked the moment a TERM came from outside (host.rs).
    asking: Option<host::Asking>,
    /// Where the system bus is asked that (settings' `system_bus`).
    system_bus: Option<Vec<u8>>,
    /// How long that answer is waited for after the TERM (settings' `host_ask_ms`).
    host_ask_ms: u64,
    /// Whether there is anyone to ask: systemd runs the host (host.rs).
    asks_host: bool,
    last_code: Option<i32>,
    limit_stats: Option<Vec<u8>>,
}

impl Task {
    /// Everything the task needs, made before the command runs; a failure here is exit 125 with nothing run.
    pub fn new(s: Settings, start: Duration) -> Task {
        let or_fail = |what: &str, e: std::io::Error| -> ! {
            crate::fail(&format!("{}: {}", what, sys::why(&e)))
        };
        let signals = Signals::open().unwrap_or_else(|e| or_fail("signalfd", e));
        let deadline = Deadline::new(start, s.deadline_ms, s.grace_ms)
            .unwrap_or_else(|e| or_fail("timerfd", e));
        let bound = if s.max_output > 0 {
            Some(
                Bound::new(&s.io, s.max_output, matches!(s.watch, Watch::Inotify))
                    .unwrap_or_else(|e| or_fail("timerfd", e)),
            )
        } else {
            None
        };
        let terminal = s
            .pty
            .as_ref()
            .map(|p| pty::open(p).unwrap_or_else(|e| crate::fail(&format!("pty: {}", e))));
        if terminal.is_some() && std::env::var_os("TERM").map_or(true, |t| t.is_empty()) {
            // What a terminal's program expects to find; set in the shim's own environment, which the command gets.
            std::env::set_var("TERM", "xterm-256color");
        }
        let command_pid = if s.command_pid {
            Some((
                sys::join(&s.io, b"command-pid.tmp"),
                sys::join(&s.io, b"command-pid"),
            ))
        } else {
            None
        };
        let (policy, attempts, restart_timer) = match s.restart {
            Some(rule) => (
                Some(Policy::new(rule)),
                Some(Attempts::open(&s.io)),
                Some(Timer::new().unwrap_or_else(|e| or_fail("timerfd", e))),
            ),
            None => (None, None, None),
        };
        Task {
            program: Program::new(&s.command),
            io: s.io,
            me: sys::getpid(),
            command_pid,
            signals,
            deadline,
            bound,
            terminal,
            policy,
            attempts,
            restart_timer,
            phase: Phase::Waiting,
            term_from_outside: false,
            asking: None,
            system_bus: s.system_bus.clone(),
            host_ask_ms: s.host_ask_ms,
            asks_host: s.host_systemd.unwrap_or_else(host::systemd_runs_host),
            last_code: None,
            limit_stats: s.limit_stats,
        }
    }

    pub fn run(mut self) -> ! {
        self.start_attempt();
        let mut poller = Poller::default();
        loop {
            poller.clear();
            self.wait_on(&mut poller);
            for (source, revents) in poller.wait() {
                self.on(source, revents);
            }
        }
    }

    fn wait_on(&self, p: &mut Poller) {
        p.add(self.signals.fd(), libc::POLLIN, Source::Signals);
        if let Some(d) = &self.deadline {
            p.add(d.fd(), libc::POLLIN, Source::Deadline);
        }
        if let Some((fd, written)) = self.bound.as_ref().and_then(|b| b.waits_on()) {
            p.add(
                fd,
                libc::POLLIN,
                if written {
                    Source::OutputWritten
                } else {
                    Source::OutputTimer
                },
            );
        }
        if let Some(t) = self.restart_timer.as_ref().filter(|t| t.armed()) {
            p.add(t.fd(), libc::POLLIN, Source::Restart);
        }
        if let (Some(t), false) = (&self.terminal, self.phase == Phase::Ended) {
            if let Some((fd, events)) = t.master() {
                p.add(fd, events, Source::Master);
            }
            if let Some(fd) = t.input() {
                p.add(fd, libc::POLLIN, Source::Input);
            }
        }
    }

    fn on(&mut self, source: Source, revents: i16) {
        match source {
            Source::Signals => {
                while let Some(sig) = self.signals.next() {
                    match sig.signo {
                        libc::SIGCHLD => self.reap(),
                        libc::SIGTERM => self.on_term(sig.from == self.me),
                        // HUP, INT, QUIT, ... sent to the group are the command's business, not the shim's.
                        _ => {}
                    }
                }
            }
            Source::Deadline => match self.deadline.as_mut().and_then(|d| d.on_timer()) {
                Some(Due::Reached) => self.on_deadline(),
                Some(Due::GraceOver) => self.kill_all(),
                None => {}
            },
            Source::OutputWritten => self.bound.as_mut().map_or((), |b| b.on_written()),
            Source::OutputTimer => self.bound.as_mut().map_or((), |b| b.on_timer()),
            Source::Restart => {
                if self.restart_timer.as_mut().map_or(false, |t| t.consume())
                    && self.phase == Phase::Waiting
                {
                    self.start_attempt();
                }
            }
            Source::Master => self.terminal.as_mut().map_or((), |t| t.on_master(revents)),
            Source::Input => self.terminal.as_mut().map_or((), |t| t.on_input()),
        }
    }

    fn start_attempt(&mut self) {
        let sizes = self.attempts.as_ref().map(|a| a.sizes());
        let started = spawn::start(&Start {
            program: &self.program,
            command_pid: self.command_pid.as_ref(),
            terminal: self.terminal.as_ref().map(|t| &t.slave),
        });
        match started {
            Ok(pid) => {
                self.phase = Phase::Running {
                    pid,
                    hung_up: false,
                };
                if let (Some(a), Some(sizes)) = (self.attempts.as_mut(), sizes) {
                    a.started(pid, sizes);
                }
            }
            Err(e) => match self.last_code {
                None => crate::fail(&format!("could not start the command: {}", sys::why(&e))),
                Some(code) => {
                    crate::say(&format!(
                        "outlive-shim: could not start the command again: {}",
                        sys::why(&e)
                    ));
                    self.finish(code);
                }
            },
        }
    }

    /// Reaps every child that ended (the command's own are the only ones it has).
    fn reap(&mut self) {
        while let Some((pid, status)) = sys::reap_any() {
            if let Some(a) = self.asking.as_mut() {
                if a.pid() == pid {
                    a.reaped();
                    continue;
                }
            }
            if let Phase::Running { pid: running, .. } = self.phase {
                if pid == running {
                    self.command_ended(marker::code_of(status));
                }
            }
        }
    }

    fn command_ended(&mut self, code: i32) {
        self.last_code = Some(code);
        if let Some(t) = self.terminal.as_mut() {
            t.drain();
        }
        if let Some(a) = self.attempts.as_mut() {
            a.ended(code);
        }
        let again = self.policy.as_mut().and_then(|p| p.after(code));
        match (again, self.restart_timer.as_mut()) {
            (Some(delay), Some(timer)) => {
                timer.arm_in(delay);
                self.phase = Phase::Waiting;
            }
            _ => self.finish(code),
        }
    }

    fn on_term(&mut self, own: bool) {
        if !own {
            self.term_from_outside = true;
            // The supervisor's kill says so before its TERM (io/kill-asked): its record says how the task ends, and
            // the host is not asked, whose answer could outlast the kill's grace where only systemctl can give it.
            if self.asking.is_none() && self.asks_host && !marker::exists(&self.io, "kill-asked") {
                self.asking = host::ask(self.system_bus.as_deref(), self.host_ask_ms);
            }
            self.stop_policy();
        }
        self.hang_up();
    }

    fn on_deadline(&mut self) {
        deadline::mark(&self.io);
        self.stop_policy();
        let _ = sys::kill(-self.me, libc::SIGTERM);
        self.hang_up();
    }

    /// No more attempts; between two, the task ends now, as if its command had died of TERM.
    fn stop_policy(&mut self) {
        if let Some(p) = self.policy.as_mut() {
            p.end();
        }
        if self.phase == Phase::Waiting && self.last_code.is_some() {
            self.finish(128 + libc::SIGTERM);
        }
    }

    fn hang_up(&mut self) {
        if let (
            Some(_),
            Phase::Running {
                pid,
                hung_up: false,
            },
        ) = (&self.terminal, self.phase)
        {
            let _ = sys::kill(pid, libc::SIGHUP);
            self.phase = Phase::Running { pid, hung_up: true };
        }
    }

    fn finish(&mut self, code: i32) {
        self.phase = Phase::Ended;
        // Before `ended`: whoever sees the end finds the counters there already.
        if let Some(mount) = &self.limit_stats {
            limits::copy(&self.io, mount);
        }
        marker::make(&self.io, "ended");
        match self.asking.take().map(|a| a.answer()) {
            Some(host::Answer::Stopping) => marker::make(&self.io, "host-stopping"),
            // Asked and not answered: the end says so, not that the host was up.
            Some(host::Answer::None(why)) => {
                marker::note(&self.io, "host-unanswered", why.as_bytes())
            }
            _ => {}
        }
        if let Some(t) = self.terminal.as_mut() {
            t.drain();
        }
        if let Some(b) = self.bound.as_mut() {
            b.look();
        }
        marker::write_code(code);
        if !self.deadline.as_ref().map_or(false, |d| d.in_grace()) {
            std::process::exit(code);
        }
    }

    /// The grace is over: KILL the group, the shim with it (and a PTY task's session, which is not in it).
    fn kill_all(&mut self) {
        if let (Some(_), Phase::Running { pid, .. }) = (&self.terminal, self.phase) {
            let _ = sys::kill(-pid, libc::SIGKILL);
        }
        let _ = sys::kill(-self.me, libc::SIGKILL);
        std::process::exit(self.last_code.unwrap_or(137));
    }
}
