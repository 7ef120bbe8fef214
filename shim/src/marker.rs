//! How the task ended, on disk: `io/ended` the moment the command is over
//! (its file time dates the end), `io/host-stopping` when a TERM came while
//! the host was shutting down (not asked when the supervisor made
//! `io/kill-asked` before its kill's TERM), `io/host-unanswered` (why, in a
//! line) when that was asked and not answered in time, and the exit code in `io/exit` (fd 3), in the
//! four bytes the caller reserved there, so a full disk cannot lose it.
//! A task the shim refused to start has no code: `io/shim-refused` says why.

use crate::sys;
use std::os::unix::ffi::OsStrExt;

/// The code a shell reports for a wait status: the exit status, or 128 + the signal.
pub fn code_of(status: libc::c_int) -> i32 {
    if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else if libc::WIFSIGNALED(status) {
        128 + libc::WTERMSIG(status)
    } else {
        125
    }
}

/// Makes `io/NAME` empty and new; whatever already stands there (a planted symlink) is left alone.
pub fn make(io: &[u8], name: &str) {
    let _ = sys::create_new(&sys::join(io, name.as_bytes()));
}

/// Writes `io/NAME` holding `text` and a newline (temp + rename: read whole or not at all).
pub fn note(io: &[u8], name: &str, text: &[u8]) {
    let mut line = text.to_vec();
    line.push(b'\n');
    let tmp = sys::join(io, format!("{}.tmp", name).as_bytes());
    let _ = sys::replace_file(&tmp, &sys::join(io, name.as_bytes()), &line, 0o644);
}

/// Whether `io/NAME` is there, whatever it is (a file, a symlink): asked of a marker another process makes.
pub fn exists(io: &[u8], name: &str) -> bool {
    sys::lstat(&sys::join(io, name.as_bytes())).is_ok()
}

/// The code as `printf '%-3s\n'` writes it ("0  \n", "143\n"), over the placeholder at offset 0 of fd 3.
pub fn write_code(code: i32) {
    let _ = sys::pwrite(3, format!("{:<3}\n", code).as_bytes(), 0);
}

/// fd 3 must be the exit marker, a regular file, before anything runs: a code with nowhere to go is a lost end.
pub fn check_fd() -> Result<(), String> {
    match sys::fstat(3) {
        Ok(st) if st.st_mode & libc::S_IFMT == libc::S_IFREG => {}
        Ok(_) => return Err("fd 3 (the exit marker, io/exit) is not a regular file".to_string()),
        Err(e) => {
            return Err(format!(
                "fd 3 (the exit marker, io/exit) is not open: {}",
                sys::why(&e)
            ))
        }
    }
    // The command never gets it: close-on-exec as well as closed in the child.
    sys::set_cloexec(3).map_err(|e| format!("fd 3: {}", sys::why(&e)))
}

/// Where the shim refused the task (exit 125, nothing run): its line in `io/shim-refused` (temp + rename), so
/// the supervisor can record why the task never started, not guess at a kill. The io directory is the one
/// that holds fd 3, the exit marker the caller made for this task (found through /proc, checked by inode),
/// never one named by settings that were just refused. Where there is none, stderr alone says it.
pub fn refused(line: &str) {
    let exit = match (sys::fstat(3), std::fs::read_link("/proc/self/fd/3")) {
        (Ok(st), Ok(path)) if st.st_mode & libc::S_IFMT == libc::S_IFREG => (st, path),
        _ => return,
    };
    let (st, path) = exit;
    let io = match path.parent() {
        Some(dir) if path.file_name().map_or(false, |n| n == "exit") => {
            dir.as_os_str().as_bytes().to_vec()
        }
        _ => return,
    };
    match sys::lstat(&sys::join(&io, b"exit")) {
        Ok(at) if at.st_dev == st.st_dev && at.st_ino == st.st_ino => {}
        _ => return,
    }
    let _ = sys::replace_file(
        &sys::join(&io, b"shim-refused.tmp"),
        &sys::join(&io, b"shim-refused"),
        format!("{}\n", line).as_bytes(),
        0o600,
    );
}
