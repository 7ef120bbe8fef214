//! The one wait of the shim: poll on every descriptor that can have news
//! (signals, timers, inotify, the terminal). Nothing wakes the shim but
//! these: no nap loop, so a quiet task costs no CPU.

use crate::sys;
use std::os::unix::io::RawFd;

#[derive(Clone, Copy, PartialEq)]
pub enum Source {
    Signals,
    Deadline,
    OutputWritten,
    OutputTimer,
    Restart,
    Master,
    Input,
}

#[derive(Default)]
pub struct Poller {
    fds: Vec<libc::pollfd>,
    sources: Vec<Source>,
}

impl Poller {
    pub fn clear(&mut self) {
        self.fds.clear();
        self.sources.clear();
    }

    pub fn add(&mut self, fd: RawFd, events: i16, source: Source) {
        self.fds.push(libc::pollfd {
            fd,
            events,
            revents: 0,
        });
        self.sources.push(source);
    }

    /// Waits until something is ready, and says what (with poll's revents).
    pub fn wait(&mut self) -> Vec<(Source, i16)> {
        if sys::poll(&mut self.fds, -1).is_err() {
            return Vec::new();
        }
        self.fds
            .iter()
            .zip(&self.sources)
            .filter(|(p, _)| p.revents != 0)
            .map(|(p, s)| (*s, p.revents))
            .collect()
    }
}
