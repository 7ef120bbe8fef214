//! A PTY task's terminal, held by the shim itself (no `script`): the
//! master end, the copy of its output to `io/stdout` (fd 1, bounded like
//! any output since the shim writes it), and the input FIFO `pty/in`
//! copied to it. The names and formats are those lib/pty reads:
//!
//! - `pty/` is 0700 and `pty/in` a 0600 FIFO, made if missing. The shim
//!   holds the FIFO open read-write, so a writer going away is never an end
//!   of input.
//! - `pty/info` is `PID TTY\n` (the session leader, which becomes the
//!   command, and e.g. `/dev/pts/3`), renamed into place once the terminal
//!   is set up and sized, so a reader never sees half of it. A resize is
//!   the supervisor's `stty -F TTY` on the pts, to which the kernel answers
//!   with SIGWINCH.
//! - The shim keeps a slave descriptor of its own, so the master never
//!   reads as hung up while no one else has the terminal open (before the
//!   child opens it, between attempts), and never spins on that hang-up.
//!   After the command ends, what the master holds is read without
//!   blocking: background jobs may hold the terminal open for ever.

use crate::settings;
use crate::sys::{self, Fd};
use std::ffi::CString;
use std::os::unix::io::RawFd;

const CHUNK: usize = 16 * 1024;
/// Reads of the master per wake-up, so a flood of output cannot starve signals and timers.
const READS_PER_WAKE: usize = 16;

/// The terminal's child end, as the command's session takes it.
pub struct Slave {
    fd: Fd,
    tty: CString,
    cols: u16,
    rows: u16,
    info: CString,
    info_tmp: CString,
}

impl Slave {
    /// In the child, before exec: a session of its own on this terminal,
    /// sized, closed to everyone but its owner (a pts is group-writable by
    /// `tty`), on fds 0, 1 and 2; then `pty/info`.
    pub fn enter(&self) -> Result<(), String> {
        sys::setsid().map_err(|e| format!("setsid: {}", sys::why(&e)))?;
        let fd = self.fd.raw();
        // SAFETY: TIOCSCTTY takes an integer argument (0: do not steal a terminal another session holds).
        if unsafe { libc::ioctl(fd, libc::TIOCSCTTY, 0) } < 0 {
            return Err(format!(
                "TIOCSCTTY: {}",
                sys::why(&std::io::Error::last_os_error())
            ));
        }
        let size = libc::winsize {
            ws_row: self.rows,
            ws_col: self.cols,
            ws_xpixel: 0,
            ws_ypixel: 0,
        };
        // SAFETY: TIOCSWINSZ reads a `winsize`, and `size` is a live one.
        if unsafe { libc::ioctl(fd, libc::TIOCSWINSZ, &size) } < 0 {
            return Err(format!(
                "TIOCSWINSZ: {}",
                sys::why(&std::io::Error::last_os_error())
            ));
        }
        let _ = sys::fchmod(fd, 0o600);
        for to in 0..3 {
            sys::dup2(fd, to).map_err(|e| format!("dup2: {}", sys::why(&e)))?;
        }
        let mut line = format!("{} ", sys::getpid()).into_bytes();
        line.extend_from_slice(self.tty.to_bytes());
        line.push(b'\n');
        sys::replace_file(&self.info_tmp, &self.info, &line, 0o666).map_err(|e| {
            format!(
                "{}: {}",
                settings::shown(self.info.to_bytes()),
                sys::why(&e)
            )
        })
    }
}

pub struct Terminal {
    master: Fd,
    input: Fd,
    /// Input read from the FIFO that the master has not taken yet (its buffer was full).
    pending: Vec<u8>,
    /// The master said end of output (a vhangup of the terminal): not waited on again, so it cannot spin.
    hung_up: bool,
    pub slave: Slave,
}

/// The terminal and its FIFO; Err says what could not be made.
pub fn open(p: &settings::Pty) -> Result<Terminal, String> {
    // SAFETY: integers only.
    let master = Fd::own(unsafe {
        libc::posix_openpt(libc::O_RDWR | libc::O_NOCTTY | libc::O_CLOEXEC | libc::O_NONBLOCK)
    })
    .map_err(|e| format!("posix_openpt: {}", sys::why(&e)))?;
    // SAFETY: integers only (grantpt and unlockpt take the master's descriptor).
    let granted = unsafe { libc::grantpt(master.raw()) } >= 0;
    // SAFETY: as above.
    if !granted || unsafe { libc::unlockpt(master.raw()) } < 0 {
        return Err(format!(
            "grantpt/unlockpt: {}",
            sys::why(&std::io::Error::last_os_error())
        ));
    }
    let mut name = [0 as libc::c_char; 64];
    // SAFETY: `name` is a live buffer of the length passed; ptsname_r writes at most that many bytes, its
    // NUL included, or fails with ERANGE.
    let r = unsafe { libc::ptsname_r(master.raw(), name.as_mut_ptr(), name.len()) };
    if r != 0 {
        return Err(format!("ptsname: {}", sys::strerror(r)));
    }
    let tty: Vec<u8> = name
        .iter()
        .take_while(|&&c| c != 0)
        .map(|&c| c as u8)
        .collect();
    let tty = sys::cstring(&tty);
    let slave = sys::open(&tty, libc::O_RDWR | libc::O_NOCTTY, 0)
        .map_err(|e| format!("{}: {}", settings::shown(tty.to_bytes()), sys::why(&e)))?;

    let dir = sys::cstring(&p.dir);
    let _ = sys::mkdir(&dir, 0o700);
    let fifo = sys::join(&p.dir, b"in");
    let is_fifo = matches!(sys::lstat(&fifo), Ok(st) if st.st_mode & libc::S_IFMT == libc::S_IFIFO);
    if !is_fifo {
        sys::mkfifo(&fifo, 0o600)
            .map_err(|e| format!("{}: {}", settings::shown(fifo.to_bytes()), sys::why(&e)))?;
    }
    let input = sys::open(&fifo, libc::O_RDWR | libc::O_NONBLOCK, 0)
        .map_err(|e| format!("{}: {}", settings::shown(fifo.to_bytes()), sys::why(&e)))?;
    if !is_fifo {
        // Exactly 0600 whatever the umask: lib/pty writes only to a 0600 FIFO of its user.
        let _ = sys::fchmod(input.raw(), 0o600);
    }
    let slave = Slave {
        fd: slave,
        tty,
        cols: p.cols,
        rows: p.rows,
        info: sys::join(&p.dir, b"info"),
        info_tmp: sys::join(&p.dir, b"info.tmp"),
    };
    Ok(Terminal {
        master,
        input,
        pending: Vec::new(),
        hung_up: false,
        slave,
    })
}

impl Terminal {
    /// The master, and what it is waited for (output, and room for pending input); None for nothing.
    pub fn master(&self) -> Option<(RawFd, i16)> {
        let out = if self.pending.is_empty() {
            0
        } else {
            libc::POLLOUT
        };
        let events = if self.hung_up {
            out
        } else {
            libc::POLLIN | out
        };
        if events == 0 {
            None
        } else {
            Some((self.master.raw(), events))
        }
    }

    /// The FIFO, while no input is waiting for the master.
    pub fn input(&self) -> Option<RawFd> {
        if self.pending.is_empty() {
            Some(self.input.raw())
        } else {
            None
        }
    }

    pub fn on_master(&mut self, revents: i16) {
        if revents & libc::POLLOUT != 0 {
            self.send();
        }
        if revents & (libc::POLLIN | libc::POLLHUP | libc::POLLERR) != 0 {
            self.copy_out(READS_PER_WAKE);
        }
    }

    pub fn on_input(&mut self) {
        let mut buf = vec![0u8; 4096];
        if let Ok(n) = sys::read(self.input.raw(), &mut buf) {
            buf.truncate(n);
            self.pending = buf;
            self.send();
        }
    }

    /// Everything the master holds now, without waiting for more.
    pub fn drain(&mut self) {
        self.copy_out(usize::MAX);
    }

    fn send(&mut self) {
        match sys::write(self.master.raw(), &self.pending) {
            Ok(n) => {
                self.pending.drain(..n);
            }
            Err(e) if e.raw_os_error() == Some(libc::EAGAIN) => {}
            // No terminal to take it: the input is dropped, as a closed window drops keystrokes.
            Err(_) => self.pending.clear(),
        }
    }

    fn copy_out(&mut self, reads: usize) {
        let mut buf = vec![0u8; CHUNK];
        for _ in 0..reads {
            match sys::read(self.master.raw(), &mut buf) {
                // A full disk loses output, never the terminal: keep reading so the command never blocks.
                Ok(n) if n > 0 => drop(sys::write_all(1, &buf[..n])),
                Err(e) if e.raw_os_error() == Some(libc::EAGAIN) => return,
                _ => {
                    self.hung_up = true;
                    return;
                }
            }
        }
    }
}
