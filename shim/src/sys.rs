//! The libc calls the shim makes, each behind a safe face, so the files that
//! do the shim's duties read as plain Rust. Every descriptor opened here is
//! O_CLOEXEC: nothing of the shim's leaks into the command.

//! Each `unsafe` block says why it is sound (`// SAFETY:`), and clippy's
//! `undocumented_unsafe_blocks` lint (main.rs) refuses one that does not.
//! Most rest on three facts:
//! - a pointer handed to the kernel comes from a live `&CStr`, slice or
//!   local of the right type and size, and the call does not keep it;
//! - the libc structs zeroed here (`stat`, `sockaddr_un`, `sigset_t`,
//!   `sigaction`) are plain data, for which all-zero bytes are a valid value;
//! - the shim is single-threaded (main.rs): after a fork the child may run
//!   any code, and libc's static buffers (`strerror`, `environ`) are not
//!   shared with another thread.

use std::ffi::{CStr, CString};
use std::io;
use std::marker::PhantomData;
use std::os::raw::c_char;
use std::os::unix::io::RawFd;

extern "C" {
    // glibc's own; the command gets the shim's environment as it is, byte for byte.
    static environ: *const *const c_char;
}

/// A descriptor the shim owns, closed when dropped.
pub struct Fd(RawFd);

impl Fd {
    /// Takes ownership of what a descriptor-making call returned, or its error when it returned -1.
    pub fn own(fd: libc::c_int) -> io::Result<Fd> {
        check(fd).map(Fd)
    }

    pub fn raw(&self) -> RawFd {
        self.0
    }
}

impl Drop for Fd {
    fn drop(&mut self) {
        close(self.0);
    }
}

fn check(r: libc::c_int) -> io::Result<libc::c_int> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

/// Retries a call cut short by a signal. With every signal blocked that is
/// rare, but a SIGSTOP/SIGCONT pair can still interrupt a blocking call.
fn retry<F: FnMut() -> libc::c_int>(mut f: F) -> io::Result<libc::c_int> {
    loop {
        match check(f()) {
            Err(e) if e.raw_os_error() == Some(libc::EINTR) => continue,
            other => return other,
        }
    }
}

fn retry_size<F: FnMut() -> libc::ssize_t>(mut f: F) -> io::Result<usize> {
    loop {
        let r = f();
        if r >= 0 {
            return Ok(r as usize);
        }
        let e = io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::EINTR) {
            return Err(e);
        }
    }
}

pub fn open(path: &CStr, flags: libc::c_int, mode: libc::mode_t) -> io::Result<Fd> {
    // SAFETY: `path` is a NUL-terminated string that outlives the call; the rest are integers.
    retry(|| unsafe { libc::open(path.as_ptr(), flags | libc::O_CLOEXEC, mode as libc::c_uint) })
        .map(Fd)
}

/// Makes an empty file that was not there, never writing through anything
/// already at that name (a planted symlink or file is left alone).
pub fn create_new(path: &CStr) -> io::Result<()> {
    open(
        path,
        libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW,
        0o666,
    )
    .map(drop)
}

/// Writes `data` to a fresh `tmp` and renames it over `path`: a reader sees the old file or the new one, never half.
pub fn replace_file(tmp: &CStr, path: &CStr, data: &[u8], mode: libc::mode_t) -> io::Result<()> {
    let fd = open(
        tmp,
        libc::O_WRONLY | libc::O_CREAT | libc::O_TRUNC | libc::O_NOFOLLOW,
        mode,
    )?;
    write_all(fd.raw(), data)?;
    drop(fd);
    rename(tmp, path)
}

pub fn read(fd: RawFd, buf: &mut [u8]) -> io::Result<usize> {
    // SAFETY: the kernel writes at most `buf.len()` bytes into `buf`, which is borrowed mutably for the call.
    retry_size(|| unsafe { libc::read(fd, buf.as_mut_ptr() as *mut libc::c_void, buf.len()) })
}

pub fn write(fd: RawFd, buf: &[u8]) -> io::Result<usize> {
    // SAFETY: the kernel reads at most `buf.len()` bytes of `buf`, which lives through the call.
    retry_size(|| unsafe { libc::write(fd, buf.as_ptr() as *const libc::c_void, buf.len()) })
}

pub fn write_all(fd: RawFd, mut buf: &[u8]) -> io::Result<()> {
    while !buf.is_empty() {
        let n = write(fd, buf)?;
        if n == 0 {
            return Err(io::Error::from_raw_os_error(libc::EIO));
        }
        buf = &buf[n..];
    }
    Ok(())
}

pub fn pwrite(fd: RawFd, buf: &[u8], offset: i64) -> io::Result<usize> {
    // SAFETY: the kernel reads at most `buf.len()` bytes of `buf`, which lives through the call.
    retry_size(|| unsafe {
        libc::pwrite(fd, buf.as_ptr() as *const libc::c_void, buf.len(), offset)
    })
}

pub fn fstat(fd: RawFd) -> io::Result<libc::stat> {
    // SAFETY: `stat` is plain data; all-zero bytes are a valid value of it.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: `st` is a live `stat` the kernel fills.
    check(unsafe { libc::fstat(fd, &mut st) })?;
    Ok(st)
}

pub fn lstat(path: &CStr) -> io::Result<libc::stat> {
    // SAFETY: `stat` is plain data; all-zero bytes are a valid value of it.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: `st` is a live `stat` the kernel fills, and `path` is NUL-terminated.
    check(unsafe { libc::lstat(path.as_ptr(), &mut st) })?;
    Ok(st)
}

pub fn stat(path: &CStr) -> io::Result<libc::stat> {
    // SAFETY: `stat` is plain data; all-zero bytes are a valid value of it.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: `st` is a live `stat` the kernel fills, and `path` is NUL-terminated.
    check(unsafe { libc::stat(path.as_ptr(), &mut st) })?;
    Ok(st)
}

pub fn is_dir(st: &libc::stat) -> bool {
    st.st_mode & libc::S_IFMT == libc::S_IFDIR
}

pub fn rename(from: &CStr, to: &CStr) -> io::Result<()> {
    // SAFETY: both are NUL-terminated strings that outlive the call.
    check(unsafe { libc::rename(from.as_ptr(), to.as_ptr()) }).map(drop)
}

pub fn mkdir(path: &CStr, mode: libc::mode_t) -> io::Result<()> {
    // SAFETY: `path` is a NUL-terminated string that outlives the call.
    check(unsafe { libc::mkdir(path.as_ptr(), mode) }).map(drop)
}

pub fn mkfifo(path: &CStr, mode: libc::mode_t) -> io::Result<()> {
    // SAFETY: `path` is a NUL-terminated string that outlives the call.
    check(unsafe { libc::mkfifo(path.as_ptr(), mode) }).map(drop)
}

pub fn fchmod(fd: RawFd, mode: libc::mode_t) -> io::Result<()> {
    // SAFETY: integers only; a stale descriptor is EBADF, not undefined behaviour.
    check(unsafe { libc::fchmod(fd, mode) }).map(drop)
}

/// Frees `[offset, offset + len)` of a file without changing its size or moving anything.
pub fn punch_hole(fd: RawFd, offset: u64, len: u64) -> io::Result<()> {
    let mode = libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE;
    // SAFETY: integers only.
    retry(|| unsafe { libc::fallocate(fd, mode, offset as libc::off_t, len as libc::off_t) })
        .map(drop)
}

pub fn close(fd: RawFd) {
    // Never retried: on Linux the descriptor is gone even when close reports EINTR.
    // SAFETY: an integer only. Closing a descriptor Rust's std still owns would break std's File, not memory;
    // the shim closes only its own `Fd`s and, in a child before exec, what it will never use again.
    unsafe { libc::close(fd) };
}

pub fn dup2(from: RawFd, to: RawFd) -> io::Result<()> {
    // SAFETY: integers only.
    retry(|| unsafe { libc::dup2(from, to) }).map(drop)
}

pub fn set_cloexec(fd: RawFd) -> io::Result<()> {
    // SAFETY: F_SETFD takes an integer argument, which is what is passed.
    check(unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) }).map(drop)
}

pub fn pipe() -> io::Result<(Fd, Fd)> {
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: `fds` is a live array of the two ints pipe2 writes.
    check(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) })?;
    Ok((Fd(fds[0]), Fd(fds[1])))
}

/// A connected, non-blocking unix stream socket to `path` (close-on-exec).
pub fn connect_unix(path: &[u8]) -> io::Result<Fd> {
    // SAFETY: integers only.
    let fd = Fd(check(unsafe {
        libc::socket(
            libc::AF_UNIX,
            libc::SOCK_STREAM | libc::SOCK_CLOEXEC | libc::SOCK_NONBLOCK,
            0,
        )
    })?);
    // SAFETY: `sockaddr_un` is plain data; all-zero bytes are a valid (empty) address.
    let mut addr: libc::sockaddr_un = unsafe { std::mem::zeroed() };
    addr.sun_family = libc::AF_UNIX as libc::sa_family_t;
    if path.len() >= addr.sun_path.len() {
        return Err(io::Error::from_raw_os_error(libc::ENAMETOOLONG));
    }
    for (i, b) in path.iter().enumerate() {
        addr.sun_path[i] = *b as libc::c_char;
    }
    let len = std::mem::size_of::<libc::sa_family_t>() + path.len() + 1;
    // SAFETY: `addr` is a live `sockaddr_un` and `len` is within its size (the path fits with its NUL, as
    // checked above); the kernel copies it during the call.
    check(unsafe {
        libc::connect(
            fd.raw(),
            &addr as *const libc::sockaddr_un as *const libc::sockaddr,
            len as libc::socklen_t,
        )
    })?;
    Ok(fd)
}

pub fn poll(fds: &mut [libc::pollfd], timeout_ms: libc::c_int) -> io::Result<usize> {
    // SAFETY: `fds` is a live slice of `pollfd`s of the length passed; the kernel writes only their `revents`.
    retry(|| unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, timeout_ms) })
        .map(|n| n as usize)
}

pub fn getpid() -> libc::pid_t {
    // SAFETY: no arguments; getpid cannot fail.
    unsafe { libc::getpid() }
}

pub fn kill(pid: libc::pid_t, sig: libc::c_int) -> io::Result<()> {
    // SAFETY: integers only.
    check(unsafe { libc::kill(pid, sig) }).map(drop)
}

/// Makes the shim the leader of a session (or at least of a process group),
/// so its pid is the group the supervisor signals.
pub fn lead_group() -> io::Result<()> {
    let me = getpid();
    // SAFETY: integers only; this and the three calls below change the process's session or group, no memory.
    if unsafe { libc::getsid(0) } == me {
        return Ok(());
    }
    // SAFETY: as above.
    if unsafe { libc::setsid() } >= 0 {
        return Ok(());
    }
    // A group leader cannot start a session; it leads its group already.
    // SAFETY: as above.
    if unsafe { libc::getpgrp() } == me {
        return Ok(());
    }
    // SAFETY: as above.
    check(unsafe { libc::setpgid(0, 0) }).map(drop)
}

pub fn setsid() -> io::Result<()> {
    // SAFETY: no arguments.
    check(unsafe { libc::setsid() }).map(drop)
}

pub fn fork() -> io::Result<libc::pid_t> {
    // SAFETY: the shim is single-threaded (main.rs), so the child is a whole copy of it: no lock is left
    // held by a thread that did not come along, and the child may allocate or run any code before it execs.
    check(unsafe { libc::fork() })
}

/// One child that has ended, reaped, or None when none has (yet).
pub fn reap_any() -> Option<(libc::pid_t, libc::c_int)> {
    let mut status = 0;
    // SAFETY: `status` is a live int the kernel writes.
    let pid = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) };
    if pid > 0 {
        Some((pid, status))
    } else {
        None
    }
}

/// Waits for `pid` to end (it must be ending: the caller killed it, or it closed its output).
pub fn reap(pid: libc::pid_t) -> Option<libc::c_int> {
    let mut status = 0;
    // SAFETY: `status` is a live int the kernel writes.
    retry(|| unsafe { libc::waitpid(pid, &mut status, 0) })
        .ok()
        .map(|_| status)
}

/// An argv as execve takes it: pointers to C strings that live at least as long as it (`'a`), and a null
/// pointer after them. Made before a fork, so the child only has to hand it to exec.
pub struct Argv<'a> {
    pointers: Vec<*const c_char>,
    words: PhantomData<&'a CStr>,
}

impl<'a> Argv<'a> {
    pub fn new<I: IntoIterator<Item = &'a CStr>>(words: I) -> Argv<'a> {
        let pointers = words
            .into_iter()
            .map(|w| w.as_ptr())
            .chain(std::iter::once(std::ptr::null()))
            .collect();
        Argv {
            pointers,
            words: PhantomData,
        }
    }
}

/// Returns only on failure, with the errno.
pub fn execve(path: &CStr, argv: &Argv) -> i32 {
    // SAFETY: `path` is NUL-terminated; every pointer of `argv` is a C string that outlives it (its lifetime),
    // and the last is null (`Argv::new`); `environ` is glibc's, which the single-threaded shim reads here
    // while nothing else can change it. On success nothing of this process is left to misuse.
    unsafe { libc::execve(path.as_ptr(), argv.pointers.as_ptr(), environ) };
    io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::ENOENT)
}

pub fn exit_now(code: i32) -> ! {
    // SAFETY: an integer only; _exit skips Rust's and libc's exit handlers, which is the point in a child.
    unsafe { libc::_exit(code) }
}

/// The text of an errno, as `strerror` gives it (the same words a shell or coreutils would print).
pub fn strerror(errno: i32) -> String {
    // SAFETY: an integer only. The string it returns is libc's, valid until the next strerror call, which no
    // other thread can make (single-threaded) and this function makes none of before copying it below.
    let p = unsafe { libc::strerror(errno) };
    if p.is_null() {
        return format!("error {}", errno);
    }
    // SAFETY: `p` is non-null, NUL-terminated and valid until the next strerror (see above); copied at once.
    unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
}

/// An error as a person reads it: strerror's words, without Rust's "(os error N)".
pub fn why(e: &io::Error) -> String {
    match e.raw_os_error() {
        Some(n) => strerror(n),
        None => e.to_string(),
    }
}

/// A C string of bytes that hold no NUL (every settings value is cut at one).
pub fn cstring(bytes: &[u8]) -> CString {
    CString::new(bytes).unwrap_or_default()
}

/// `dir/name` as a C string.
pub fn join(dir: &[u8], name: &[u8]) -> CString {
    let mut p = dir.to_vec();
    if p.last() != Some(&b'/') {
        p.push(b'/');
    }
    p.extend_from_slice(name);
    cstring(&p)
}

/// Closes every descriptor from `first` up, in a child before exec: the
/// command gets 0, 1 and 2 and nothing else, not even what the shim's own
/// caller left open by mistake.
pub fn close_from(first: RawFd) {
    // SAFETY: close_range takes three integers, passed as such (the variadic syscall takes them as c_uint).
    if unsafe {
        libc::syscall(
            libc::SYS_close_range,
            first as libc::c_uint,
            libc::c_uint::MAX,
            0 as libc::c_uint,
        )
    } == 0
    {
        return;
    }
    // Kernels before 5.9: whatever /proc says is open.
    let open: Vec<RawFd> = match std::fs::read_dir("/proc/self/fd") {
        Ok(dir) => dir
            .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
            .filter(|&fd| fd >= first)
            .collect(),
        Err(_) => return,
    };
    for fd in open {
        close(fd);
    }
}
