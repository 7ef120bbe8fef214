//! Signals arrive as data on a descriptor (signalfd), never as handlers: the
//! shim blocks them all at its first line, so a HUP or INT sent to the
//! task's group, or a TERM, can never end it before it has recorded how the
//! command ended. Its children get every signal back at its default.

use crate::sys::{self, Fd};
use std::io;
use std::os::unix::io::RawFd;

/// Faults the shim's own code could raise: blocking them would not stop the
/// kernel from ending the shim, only hide why.
const FAULTS: [libc::c_int; 7] = [
    libc::SIGSEGV,
    libc::SIGBUS,
    libc::SIGFPE,
    libc::SIGILL,
    libc::SIGTRAP,
    libc::SIGSYS,
    libc::SIGABRT,
];

fn blocked_set() -> libc::sigset_t {
    // SAFETY: `sigset_t` is plain data; all-zero bytes are a valid (empty) set.
    let mut set: libc::sigset_t = unsafe { std::mem::zeroed() };
    // SAFETY: `set` is a live sigset_t.
    unsafe { libc::sigfillset(&mut set) };
    for sig in FAULTS {
        // SAFETY: `set` is a live sigset_t and `sig` a valid signal number.
        unsafe { libc::sigdelset(&mut set, sig) };
    }
    set
}

/// Blocks every signal the shim may be sent. First thing in main.
pub fn block_all() {
    let set = blocked_set();
    // SAFETY: `set` is a live sigset_t the kernel reads; a null old set is allowed. Single-threaded, so the
    // process mask (sigprocmask, not pthread_sigmask) is the only one.
    unsafe { libc::sigprocmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()) };
}

/// In a child between fork and exec: every disposition back to its default
/// and nothing blocked, as a fresh process has it (dispositions and the mask
/// survive exec; the shim's parent may have ignored some).
pub fn reset_for_exec() {
    // SAFETY: `sigaction` is plain data; all-zero bytes are a valid value (no flags, an empty mask, handler 0),
    // and SIG_DFL is then set as its handler.
    let mut dfl: libc::sigaction = unsafe { std::mem::zeroed() };
    dfl.sa_sigaction = libc::SIG_DFL;
    for sig in 1..65 {
        if sig == libc::SIGKILL || sig == libc::SIGSTOP {
            continue;
        }
        // glibc refuses its own two (32 and 33); nothing to reset there.
        // SAFETY: `dfl` is a live sigaction with no handler function, so no code of the shim's can be called
        // from a signal; a null old action is allowed.
        unsafe { libc::sigaction(sig, &dfl, std::ptr::null_mut()) };
    }
    // SAFETY: as in blocked_set.
    let mut none: libc::sigset_t = unsafe { std::mem::zeroed() };
    // SAFETY: `none` is a live sigset_t.
    unsafe { libc::sigemptyset(&mut none) };
    // SAFETY: `none` is a live sigset_t the kernel reads; a null old set is allowed.
    unsafe { libc::sigprocmask(libc::SIG_SETMASK, &none, std::ptr::null_mut()) };
}

/// The blocked signals, as they come.
pub struct Signals {
    fd: Fd,
}

/// One signal that came: which, and who sent it (0 when the kernel did).
pub struct Received {
    pub signo: libc::c_int,
    pub from: libc::pid_t,
}

impl Signals {
    pub fn open() -> io::Result<Signals> {
        let set = blocked_set();
        // SAFETY: `set` is a live sigset_t the kernel copies; -1 asks for a new descriptor.
        let fd =
            Fd::own(unsafe { libc::signalfd(-1, &set, libc::SFD_NONBLOCK | libc::SFD_CLOEXEC) })?;
        Ok(Signals { fd })
    }

    pub fn fd(&self) -> RawFd {
        self.fd.raw()
    }

    pub fn next(&self) -> Option<Received> {
        // struct signalfd_siginfo is 128 bytes: ssi_signo (u32) at 0, ssi_pid (u32) at 12.
        let mut buf = [0u8; 128];
        match sys::read(self.fd.raw(), &mut buf) {
            Ok(128) => Some(Received {
                signo: word(&buf, 0) as libc::c_int,
                from: word(&buf, 12) as libc::pid_t,
            }),
            _ => None,
        }
    }
}

fn word(buf: &[u8], at: usize) -> u32 {
    u32::from_ne_bytes([buf[at], buf[at + 1], buf[at + 2], buf[at + 3]])
}
