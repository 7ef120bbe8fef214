//! The deadline: a timer on the boot clock set from the shim's own start,
//! so the task ends on time even with no supervisor alive, and a suspended
//! machine does not stretch it (the boot clock counts the sleep). A timer
//! never fires early. At the deadline the task's group is sent TERM; after
//! the grace, KILL (the shim included, as the wrapper's warden did).

use crate::clock::{self, Timer};
use crate::sys;
use std::io;
use std::os::unix::io::RawFd;
use std::time::Duration;

pub enum Due {
    /// The deadline: mark it and TERM the group; the grace has begun.
    Reached,
    /// The grace is over: KILL the group.
    GraceOver,
}

pub struct Deadline {
    timer: Timer,
    grace: Duration,
    reached: bool,
}

impl Deadline {
    /// None when the task has no deadline (`ms` is 0).
    pub fn new(start: Duration, ms: u64, grace_ms: u64) -> io::Result<Option<Deadline>> {
        if ms == 0 {
            return Ok(None);
        }
        let mut timer = Timer::new()?;
        timer.arm_at(start + Duration::from_millis(ms));
        Ok(Some(Deadline {
            timer,
            grace: Duration::from_millis(grace_ms),
            reached: false,
        }))
    }

    pub fn fd(&self) -> RawFd {
        self.timer.fd()
    }

    /// Between the deadline and the end of its grace.
    pub fn in_grace(&self) -> bool {
        self.reached
    }

    pub fn on_timer(&mut self) -> Option<Due> {
        if !self.timer.consume() {
            return None;
        }
        if self.reached {
            return Some(Due::GraceOver);
        }
        self.reached = true;
        self.timer.arm_at(clock::now() + self.grace);
        Some(Due::Reached)
    }
}

/// `io/timed-out`: the place reserved at the spawn is renamed into it (so
/// the mark needs no new space on a full disk), then opened with O_TRUNC,
/// which sets its time, the time of the timeout. Never through a symlink.
pub fn mark(io: &[u8]) {
    let path = sys::join(io, b"timed-out");
    let _ = sys::rename(&sys::join(io, b"timed-out.reserved"), &path);
    let _ = sys::open(
        &path,
        libc::O_WRONLY | libc::O_CREAT | libc::O_TRUNC | libc::O_NOFOLLOW,
        0o666,
    );
}
