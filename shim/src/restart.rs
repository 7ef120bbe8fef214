//! The restart policy: the command runs again after it ends (`always`: any
//! end; `on-failure`: a non-zero code, a signal included), after a delay
//! that doubles from the first to the cap, at most `max` times. A TERM from
//! outside, or the deadline, ends the policy: the task is being stopped.
//! Each attempt is one JSON line of `io/attempts` when it starts and when it
//! ends; nothing goes into the output itself.

use crate::clock;
use crate::settings::{Restart, RestartWhen};
use crate::sys::{self, Fd};
use std::time::Duration;

pub struct Policy {
    rule: Restart,
    restarts: u32,
    over: bool,
}

impl Policy {
    pub fn new(rule: Restart) -> Policy {
        Policy {
            rule,
            restarts: 0,
            over: false,
        }
    }

    /// No restart from here on.
    pub fn end(&mut self) {
        self.over = true;
    }

    /// The wait before the next attempt, after one that ended with `code`; None when there is none.
    pub fn after(&mut self, code: i32) -> Option<Duration> {
        let wanted = self.rule.when == RestartWhen::Always || code != 0;
        if self.over || !wanted || self.restarts >= self.rule.max {
            return None;
        }
        let ms = delay_ms(self.rule.delay_ms, self.rule.delay_max_ms, self.restarts);
        self.restarts += 1;
        Some(Duration::from_millis(ms))
    }
}

/// The delay before restart number `done + 1`: `first` doubled `done` times, no more than `cap`.
fn delay_ms(first: u64, cap: u64, done: u32) -> u64 {
    let mut ms = first;
    for _ in 0..done {
        if ms >= cap {
            break;
        }
        ms = ms.saturating_mul(2);
    }
    ms.min(cap)
}

/// `io/attempts`, appended one whole line a write.
pub struct Attempts {
    file: Option<Fd>,
    io: Vec<u8>,
    number: u32,
}

impl Attempts {
    pub fn open(io: &[u8]) -> Attempts {
        let file = sys::open(
            &sys::join(io, b"attempts"),
            libc::O_WRONLY | libc::O_APPEND | libc::O_CREAT | libc::O_NOFOLLOW,
            0o666,
        )
        .ok();
        Attempts {
            file,
            io: io.to_vec(),
            number: 0,
        }
    }

    /// The output files' sizes now: where the next attempt's output will begin.
    pub fn sizes(&self) -> (u64, u64) {
        let size = |name: &[u8]| {
            sys::stat(&sys::join(&self.io, name))
                .map(|st| st.st_size as u64)
                .unwrap_or(0)
        };
        (size(b"stdout"), size(b"stderr"))
    }

    pub fn started(&mut self, pid: libc::pid_t, (stdout, stderr): (u64, u64)) {
        self.number += 1;
        self.line(format!(
            "{{\"attempt\":{},\"event\":\"start\",\"at\":{},\"pid\":{},\"stdout\":{},\"stderr\":{}}}\n",
            self.number,
            clock::epoch_ms(),
            pid,
            stdout,
            stderr
        ));
    }

    pub fn ended(&mut self, code: i32) {
        self.line(format!(
            "{{\"attempt\":{},\"event\":\"end\",\"at\":{},\"code\":{}}}\n",
            self.number,
            clock::epoch_ms(),
            code
        ));
    }

    fn line(&self, text: String) {
        if let Some(f) = &self.file {
            let _ = sys::write_all(f.raw(), text.as_bytes());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::delay_ms;

    #[test]
    fn doubles_up_to_the_cap() {
        let got: Vec<u64> = (0..5).map(|n| delay_ms(200, 1000, n)).collect();
        assert_eq!(got, vec![200, 400, 800, 1000, 1000]);
        assert_eq!(delay_ms(u64::MAX / 2 + 1, u64::MAX, 70), u64::MAX);
    }
}
