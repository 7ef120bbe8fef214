//! Time as the shim keeps it: CLOCK_BOOTTIME, which goes on counting while
//! the machine is suspended, so a deadline is never stretched by a laptop's
//! sleep; and timers as descriptors (timerfd) that wait in the same poll as
//! everything else, so no timer needs a thread or a nap loop.

use crate::sys::{self, Fd};
use std::io;
use std::os::unix::io::RawFd;
use std::time::Duration;

/// Time since boot, suspend included.
pub fn now() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // CLOCK_BOOTTIME exists on every kernel this runs on (2.6.39 and later); it cannot fail here.
    // SAFETY: `ts` is a live timespec the kernel fills.
    unsafe { libc::clock_gettime(libc::CLOCK_BOOTTIME, &mut ts) };
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// Wall-clock milliseconds since the epoch, for records people and other programs read.
pub fn epoch_ms() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a live timespec the kernel fills.
    unsafe { libc::clock_gettime(libc::CLOCK_REALTIME, &mut ts) };
    ts.tv_sec as u64 * 1000 + ts.tv_nsec as u64 / 1_000_000
}

/// A one-shot timer on CLOCK_BOOTTIME, readable once it has fired.
pub struct Timer {
    fd: Fd,
    armed: bool,
}

impl Timer {
    pub fn new() -> io::Result<Timer> {
        // SAFETY: integers only.
        let fd = Fd::own(unsafe {
            libc::timerfd_create(libc::CLOCK_BOOTTIME, libc::TFD_NONBLOCK | libc::TFD_CLOEXEC)
        })?;
        Ok(Timer { fd, armed: false })
    }

    pub fn fd(&self) -> RawFd {
        self.fd.raw()
    }

    pub fn armed(&self) -> bool {
        self.armed
    }

    /// Fires at `at` on the boot clock (never before it).
    pub fn arm_at(&mut self, at: Duration) {
        // A zero it_value would disarm: the earliest time there is stands for "now".
        let at = if at.is_zero() {
            Duration::from_nanos(1)
        } else {
            at
        };
        self.set(at, libc::TFD_TIMER_ABSTIME);
    }

    /// Fires `after` from now.
    pub fn arm_in(&mut self, after: Duration) {
        let after = if after.is_zero() {
            Duration::from_nanos(1)
        } else {
            after
        };
        self.set(after, 0);
    }

    pub fn disarm(&mut self) {
        self.set(Duration::ZERO, 0);
        self.armed = false;
        self.consume();
    }

    fn set(&mut self, value: Duration, flags: libc::c_int) {
        let spec = libc::itimerspec {
            it_interval: libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            },
            it_value: libc::timespec {
                tv_sec: value.as_secs() as libc::time_t,
                tv_nsec: value.subsec_nanos() as libc::c_long,
            },
        };
        // SAFETY: `spec` is a live itimerspec the kernel reads during the call; a null old value is allowed.
        // It cannot fail on the shim's own timerfd with a value in range (a Duration's nanoseconds are < 1e9).
        unsafe { libc::timerfd_settime(self.fd.raw(), flags, &spec, std::ptr::null_mut()) };
        self.armed = !value.is_zero();
    }

    /// True when the timer had fired (and is now quiet until armed again).
    pub fn consume(&mut self) -> bool {
        let mut buf = [0u8; 8];
        let fired = matches!(sys::read(self.fd.raw(), &mut buf), Ok(8));
        if fired {
            self.armed = false;
        }
        fired
    }
}
