//! The output bound, kept without ever standing in the output's way: the
//! command writes `io/stdout` and `io/stderr` itself (a shim that died
//! would block nothing), and the shim frees their oldest bytes behind it.
//! The same rules as lib/output/trim-loop.ts, which readers rely on:
//!
//! - Offsets stay absolute (a file's size is all that was ever written);
//!   the oldest bytes are freed by punching a hole at the head, so the
//!   command's O_APPEND writes are never moved, blocked or truncated.
//! - At least `max` bytes stay: only whole 4096-byte blocks are cut.
//! - `STREAM.dropped` (temp file + rename) says the new dropped-up-to
//!   offset BEFORE the hole is punched, so no punched byte (now zeros) is
//!   ever passed off as output.
//! - A file system that cannot punch says why in `io/trim-failed`, and the
//!   bound stops; the deadline does not depend on it.
//!
//! When to look: first by a timer, 100 ms while a file grows, doubling while
//! both are quiet, one `fstat` per file a look. A task allowed inotify
//! (`watch=inotify`) takes its instance only once the timer has backed off
//! to its slowest (WATCH_FROM): from then on it looks when a file is written
//! (IN_MODIFY), but not again within 100 ms of the last look, so a burst of
//! writes costs ten looks a second and a quiet task no wake-up at all.
//! Without inotify (`watch=poll`, or no instance left:
//! `fs.inotify.max_user_instances` is often 128) the timer goes on at 1.6 s.
//!
//! Why not at once: closing an inotify instance that holds a watch waits for
//! an SRCU grace period in the kernel (`fsnotify_destroy_group`, ~11 ms here,
//! up to 23), and the shim closes it in `exit_group`, so its parent cannot
//! reap it until then (bench/RESULTS.md, "the inotify instance's close"). A
//! short task, the most common kind, ends within its first second and
//! never pays it; a long one pays it once, at an end nobody is waiting on.

use crate::clock::{self, Timer};
use crate::sys::{self, Fd};
use std::ffi::CString;
use std::io;
use std::os::unix::io::RawFd;
use std::time::Duration;

const BLOCK: u64 = 4096;
const QUICK: Duration = Duration::from_millis(100);
const SLOWEST: Duration = Duration::from_millis(1600);
/// The nap at which a task allowed inotify takes its instance instead of napping: when the timer is about to
/// back off to SLOWEST, the files have been quiet through 100 + 200 + 400 + 800 ms (1.5 s from the first look
/// for a silent task). Sooner, and the short tasks that end within it would pay the instance's close at their
/// exit (above); later, and an idle task would wake every 1.6 s for nothing before it gets to sleep on inotify.
const WATCH_FROM: Duration = SLOWEST;

struct Stream {
    path: CString,
    /// Held for fstat and fallocate (which needs a writable descriptor); None when the file was not there.
    file: Option<Fd>,
    size: u64,
    dropped: u64,
    marker: CString,
    marker_tmp: CString,
}

impl Stream {
    fn open(io: &[u8], name: &str) -> Stream {
        let path = sys::join(io, name.as_bytes());
        let file = sys::open(&path, libc::O_WRONLY | libc::O_NOFOLLOW, 0).ok();
        Stream {
            path,
            file,
            size: 0,
            dropped: 0,
            marker: sys::join(io, format!("{}.dropped", name).as_bytes()),
            marker_tmp: sys::join(io, format!("{}.dropped.tmp", name).as_bytes()),
        }
    }

    /// Looks at the file's size (true when it grew) and cuts its head when it is past `max`.
    /// Err: the hole could not be punched.
    fn look(&mut self, max: u64, grew: &mut bool) -> Result<(), io::Error> {
        let size = match self.file.as_ref().map(|f| sys::fstat(f.raw())) {
            Some(Ok(st)) => st.st_size as u64,
            _ => return Ok(()),
        };
        if size != self.size {
            *grew = true;
            self.size = size;
        }
        let cut = size.saturating_sub(max) / BLOCK * BLOCK;
        if cut <= self.dropped {
            return Ok(());
        }
        if sys::replace_file(
            &self.marker_tmp,
            &self.marker,
            format!("{}\n", cut).as_bytes(),
            0o600,
        )
        .is_err()
        {
            // No marker, no hole: tried again at the next look.
            return Ok(());
        }
        let fd = self.file.as_ref().map(|f| f.raw()).unwrap_or(-1);
        sys::punch_hole(fd, self.dropped, cut - self.dropped)?;
        self.dropped = cut;
        Ok(())
    }
}

enum Watch {
    /// Holds an instance watching both files.
    Inotify(Fd),
    /// Polls for now; takes an instance once the timer backs off to WATCH_FROM.
    Later,
    /// Polls for good (`watch=poll`, or no instance to be had).
    Poll,
}

pub struct Bound {
    max: u64,
    streams: [Stream; 2],
    watch: Watch,
    /// Polling: the next look. Inotify: the end of the quiet time after a look.
    timer: Timer,
    nap: Duration,
    last_look: Option<Duration>,
    failed: CString,
    stopped: bool,
}

impl Bound {
    pub fn new(io: &[u8], max: u64, inotify: bool) -> io::Result<Bound> {
        let streams = [Stream::open(io, "stdout"), Stream::open(io, "stderr")];
        let watch = if inotify { Watch::Later } else { Watch::Poll };
        let mut timer = Timer::new()?;
        timer.arm_in(QUICK);
        Ok(Bound {
            max,
            streams,
            watch,
            timer,
            nap: QUICK,
            last_look: None,
            failed: sys::join(io, b"trim-failed"),
            stopped: false,
        })
    }

    /// What to wait on now: the inotify instance, or the timer (none once trimming has stopped).
    pub fn waits_on(&self) -> Option<(RawFd, bool)> {
        if self.stopped {
            return None;
        }
        match &self.watch {
            Watch::Inotify(fd) if !self.timer.armed() => Some((fd.raw(), true)),
            _ => Some((self.timer.fd(), false)),
        }
    }

    /// A file was written (inotify).
    pub fn on_written(&mut self) {
        self.forget_events();
        let now = clock::now();
        match self.last_look {
            Some(at) if now < at + QUICK => self.timer.arm_at(at + QUICK),
            _ => drop(self.look()),
        }
    }

    pub fn on_timer(&mut self) {
        if !self.timer.consume() {
            return;
        }
        self.forget_events();
        let grew = self.look();
        if let Watch::Inotify(_) = self.watch {
            return;
        }
        self.nap = if grew {
            QUICK
        } else {
            (self.nap * 2).min(SLOWEST)
        };
        if self.stopped {
            return;
        }
        if self.nap >= WATCH_FROM && matches!(self.watch, Watch::Later) {
            match watch_files(&self.streams) {
                Some(fd) => {
                    self.watch = Watch::Inotify(fd);
                    // A write between the look above and the watch raised no event: one more look sees it.
                    self.look();
                    return;
                }
                None => self.watch = Watch::Poll,
            }
        }
        self.timer.arm_in(self.nap);
    }

    /// One look at both files; true when one grew since the last.
    pub fn look(&mut self) -> bool {
        let mut grew = false;
        if self.stopped {
            return grew;
        }
        self.last_look = Some(clock::now());
        for i in 0..2 {
            if let Err(e) = self.streams[i].look(self.max, &mut grew) {
                let path = self.streams[i].path.to_bytes();
                let mut why = b"fallocate --punch-hole failed on ".to_vec();
                why.extend_from_slice(path);
                why.extend_from_slice(format!(": {}\n", sys::why(&e)).as_bytes());
                let _ = write_new(&self.failed, &why);
                self.stopped = true;
                self.timer.disarm();
                break;
            }
        }
        grew
    }

    fn forget_events(&self) {
        if let Watch::Inotify(fd) = &self.watch {
            let mut buf = [0u8; 1024];
            while let Ok(n) = sys::read(fd.raw(), &mut buf) {
                if n == 0 {
                    break;
                }
            }
        }
    }
}

fn write_new(path: &CString, data: &[u8]) -> io::Result<()> {
    let fd = sys::open(
        path,
        libc::O_WRONLY | libc::O_CREAT | libc::O_TRUNC | libc::O_NOFOLLOW,
        0o600,
    )?;
    sys::write_all(fd.raw(), data)
}

/// An inotify instance on both files, or None (no instance or watch left: the caller polls instead).
fn watch_files(streams: &[Stream; 2]) -> Option<Fd> {
    // SAFETY: integers only.
    let fd = Fd::own(unsafe { libc::inotify_init1(libc::IN_NONBLOCK | libc::IN_CLOEXEC) }).ok()?;
    for s in streams.iter().filter(|s| s.file.is_some()) {
        // SAFETY: `s.path` is a NUL-terminated string that outlives the call; the kernel copies it.
        let wd = unsafe {
            libc::inotify_add_watch(
                fd.raw(),
                s.path.as_ptr(),
                libc::IN_MODIFY | libc::IN_DONT_FOLLOW,
            )
        };
        if wd < 0 {
            return None;
        }
    }
    Some(fd)
}
