//! A task's settings, read from stdin: never from a file (nothing to leave
//! behind or to race on) and never from the environment (which is the
//! command's, untouched). The format is NUL-terminated `key=value` fields,
//! `v=1` first and `end=` last, so any byte but NUL passes through as it is
//! (arguments, paths, a shell script with newlines) and a caller that died
//! half-way is told apart from one that had nothing more to say.
//!
//! Everything is checked here, before anything else happens, and a problem
//! is one line naming the key: the inner code trusts what it gets.

use crate::clock;
use crate::sys;
use std::os::unix::io::RawFd;
use std::time::Duration;

/// More than any real task needs (the command line itself is capped at some 2 MiB by the kernel).
pub const MAX_BYTES: usize = 4 << 20;
/// One block of the file system: a hole is punched in whole blocks.
pub const MIN_OUTPUT: u64 = 4096;
/// The caller writes the settings and closes its end at once; this only bounds a caller that never does.
const READ_WITHIN: Duration = Duration::from_secs(30);
/// A hundred years: longer durations are typing errors, and this keeps every sum far from overflowing.
const MAX_MS: u64 = 100 * 365 * 24 * 3600 * 1000;
/// An hour: a longer wait for one answer is a mistake, not a slow machine.
const MAX_ASK_MS: u64 = 3600 * 1000;
/// The largest terminal side (lib/pty/size.ts MAX_PTY_SIDE).
const MAX_SIDE: u64 = 10_000;
const MAX_RESTARTS: u64 = 1_000_000;

pub enum Watch {
    Inotify,
    Poll,
}

pub enum Command {
    Argv(Vec<Vec<u8>>),
    Shell { shell: Vec<u8>, script: Vec<u8> },
}

pub struct Pty {
    pub dir: Vec<u8>,
    pub cols: u16,
    pub rows: u16,
}

#[derive(Clone, Copy, PartialEq)]
pub enum RestartWhen {
    OnFailure,
    Always,
}

pub struct Restart {
    pub when: RestartWhen,
    pub max: u32,
    pub delay_ms: u64,
    pub delay_max_ms: u64,
}

pub struct Settings {
    pub io: Vec<u8>,
    pub enter: Option<Vec<u8>>,
    pub deadline_ms: u64,
    pub grace_ms: u64,
    pub max_output: u64,
    pub watch: Watch,
    pub command_pid: bool,
    pub command: Command,
    pub pty: Option<Pty>,
    pub restart: Option<Restart>,
    /// The system bus's socket, asked whether the host is stopping (host.rs); None: systemctl alone is asked.
    pub system_bus: Option<Vec<u8>>,
    /// Whether systemd runs the host, so that asking whether it is stopping has an answer: None, look
    /// (`/run/systemd/system`, as sd_booted does); `host_systemd=1` or `0` says so instead.
    pub host_systemd: Option<bool>,
    /// How long after a TERM from outside the answer whether the host is stopping is waited for (host.rs).
    pub host_ask_ms: u64,
    /// The cgroup v2 mount: copy the cgroup's limit counters into `io/` at the end (limits.rs).
    pub limit_stats: Option<Vec<u8>>,
}

/// Reads fd 0 to its end: at most MAX_BYTES, within READ_WITHIN.
pub fn read(fd: RawFd) -> Result<Vec<u8>, String> {
    let mut data = Vec::new();
    let mut chunk = [0u8; 8192];
    let until = clock::now() + READ_WITHIN;
    loop {
        let left = until.saturating_sub(clock::now());
        let mut p = [libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        }];
        let ready = sys::poll(&mut p, left.as_millis() as libc::c_int)
            .map_err(|e| format!("settings: could not read stdin: {}", sys::why(&e)))?;
        if ready == 0 {
            return Err(format!(
                "settings: stdin did not end within {} s (the caller writes them and closes it)",
                READ_WITHIN.as_secs()
            ));
        }
        match sys::read(fd, &mut chunk) {
            Ok(0) => return Ok(data),
            Ok(n) if data.len() + n > MAX_BYTES => {
                return Err(format!("settings: more than {} bytes on stdin", MAX_BYTES))
            }
            Ok(n) => data.extend_from_slice(&chunk[..n]),
            Err(e) if e.raw_os_error() == Some(libc::EAGAIN) => {}
            Err(e) => return Err(format!("settings: could not read stdin: {}", sys::why(&e))),
        }
    }
}

/// What a value looks like in a message: escaped, and cut at 64 bytes.
pub fn shown(v: &[u8]) -> String {
    let mut s: String = v
        .iter()
        .take(64)
        .flat_map(|b| std::ascii::escape_default(*b))
        .map(char::from)
        .collect();
    if v.len() > 64 {
        s.push_str("...");
    }
    format!("\"{}\"", s)
}

const SINGLE: [&str; 21] = [
    "id",
    "io",
    "enter",
    "deadline_ms",
    "grace_ms",
    "max_output",
    "watch",
    "command_pid",
    "mode",
    "shell",
    "script",
    "pty_dir",
    "cols",
    "rows",
    "restart",
    "restart_max",
    "restart_delay_ms",
    "system_bus",
    "host_systemd",
    "host_ask_ms",
    "limit_stats",
];
const LAST_SINGLE: &str = "restart_delay_max_ms";
const DEFAULT_SYSTEM_BUS: &[u8] = b"/run/dbus/system_bus_socket";

struct Fields<'a> {
    single: Vec<(&'static str, &'a [u8])>,
    args: Vec<&'a [u8]>,
}

impl<'a> Fields<'a> {
    fn get(&self, key: &str) -> Option<&'a [u8]> {
        self.single.iter().find(|(k, _)| *k == key).map(|(_, v)| *v)
    }

    fn need(&self, key: &str) -> Result<&'a [u8], String> {
        self.get(key).ok_or_else(|| format!("{}: missing", key))
    }

    fn number(&self, key: &str, max: u64) -> Result<Option<u64>, String> {
        match self.get(key) {
            None => Ok(None),
            Some(v) => {
                let n = whole_number(v)
                    .ok_or_else(|| format!("{}: not a whole number: {}", key, shown(v)))?;
                if n > max {
                    return Err(format!("{}: {} is more than {}", key, n, max));
                }
                Ok(Some(n))
            }
        }
    }

    fn need_number(&self, key: &str, max: u64) -> Result<u64, String> {
        self.number(key, max)?
            .ok_or_else(|| format!("{}: missing", key))
    }
}

fn whole_number(v: &[u8]) -> Option<u64> {
    if v.is_empty() || v.len() > 19 || !v.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(v).ok()?.parse().ok()
}

/// Splits the input into its fields, checking the frame (`v=1` … `end=`)
/// as it goes, so hostile input is refused at its first bad field.
fn split(input: &[u8]) -> Result<Fields<'_>, String> {
    let mut fields = Fields {
        single: Vec::new(),
        args: Vec::new(),
    };
    let mut rest = input;
    let mut first = true;
    loop {
        let at = match rest.iter().position(|&b| b == 0) {
            Some(at) => at,
            None if rest.is_empty() && first => {
                return Err(
                    "settings: cut short (nothing on stdin; expected v=1 ... end=)".to_string(),
                )
            }
            None if rest.is_empty() => {
                return Err("settings: cut short (no end= field)".to_string())
            }
            None => {
                return Err(format!(
                    "settings: cut short (the input ends in a field with no NUL after it: {})",
                    shown(rest)
                ))
            }
        };
        let (f, after) = (&rest[..at], &rest[at + 1..]);
        rest = after;
        if first {
            match f {
                b"v=1" => {}
                _ if f.starts_with(b"v=") => {
                    return Err(format!(
                        "v: version {} is not one this shim reads (v=1)",
                        shown(&f[2..])
                    ))
                }
                _ => return Err(format!("v: the first field must be v=1, got {}", shown(f))),
            }
            first = false;
            continue;
        }
        let eq = f
            .iter()
            .position(|&b| b == b'=')
            .ok_or_else(|| format!("settings: a field with no '=': {}", shown(f)))?;
        let (key, value) = (&f[..eq], &f[eq + 1..]);
        match key {
            b"end" if !value.is_empty() => {
                return Err(format!("end: takes no value, got {}", shown(value)))
            }
            b"end" if !rest.is_empty() => {
                let more = rest.iter().filter(|&&b| b == 0).count().max(1);
                return Err(format!("end: {} more field(s) after it", more));
            }
            b"end" => return Ok(fields),
            b"arg" => fields.args.push(value),
            b"v" => return Err("v: given twice".to_string()),
            _ => {
                let known = SINGLE
                    .iter()
                    .chain(std::iter::once(&LAST_SINGLE))
                    .find(|k| k.as_bytes() == key);
                let known =
                    *known.ok_or_else(|| format!("settings: unknown key {}", shown(key)))?;
                if fields.get(known).is_some() {
                    return Err(format!("{}: given twice", known));
                }
                fields.single.push((known, value));
            }
        }
    }
}

fn absolute(key: &str, v: &[u8]) -> Result<Vec<u8>, String> {
    if v.first() != Some(&b'/') {
        return Err(format!("{}: not an absolute path: {}", key, shown(v)));
    }
    Ok(v.to_vec())
}

/// A yes-or-no setting: `1` or `0`.
fn one_or_zero(key: &str, v: &[u8]) -> Result<bool, String> {
    match v {
        b"1" => Ok(true),
        b"0" => Ok(false),
        _ => Err(format!("{}: expected 1 or 0, got {}", key, shown(v))),
    }
}

/// The settings in `input`, for the task whose id is `id` (the shim's argv[1]).
pub fn parse(input: &[u8], id: &[u8]) -> Result<Settings, String> {
    let f = split(input)?;
    let given = f.need("id")?;
    if given != id {
        return Err(format!(
            "id: {} is not the task id on the command line ({})",
            shown(given),
            shown(id)
        ));
    }
    let io = absolute("io", f.need("io")?)?;
    match sys::stat(&sys::cstring(&io)) {
        Ok(st) if sys::is_dir(&st) => {}
        Ok(_) => return Err(format!("io: not a directory: {}", shown(&io))),
        Err(e) => return Err(format!("io: {}: {}", shown(&io), sys::why(&e))),
    }
    let enter = match f.get("enter") {
        None => None,
        Some(v) => Some(absolute("enter", v)?),
    };
    let deadline_ms = f.need_number("deadline_ms", MAX_MS)?;
    let grace_ms = f.need_number("grace_ms", MAX_MS)?;
    let max_output = f.need_number("max_output", u64::MAX >> 2)?;
    if max_output != 0 && max_output < MIN_OUTPUT {
        return Err(format!(
            "max_output: {} is below the minimum of {} bytes (0 keeps all output)",
            max_output, MIN_OUTPUT
        ));
    }
    let watch = match f.need("watch")? {
        b"inotify" => Watch::Inotify,
        b"poll" => Watch::Poll,
        v => return Err(format!("watch: expected inotify or poll, got {}", shown(v))),
    };
    let command_pid = one_or_zero("command_pid", f.need("command_pid")?)?;
    let command = command(&f)?;
    let pty = pty(&f)?;
    if pty.is_some() && command_pid {
        return Err(
            "command_pid: must be 0 for a PTY task (pty/info names its command)".to_string(),
        );
    }
    let restart = restart(&f)?;
    // Absent: the system bus where systemd's is; empty: none (systemctl alone); else a socket's absolute path.
    let system_bus = match f.get("system_bus") {
        None => Some(DEFAULT_SYSTEM_BUS.to_vec()),
        Some(b"") => None,
        Some(v) => Some(absolute("system_bus", v)?),
    };
    let host_systemd = match f.get("host_systemd") {
        None => None,
        Some(v) => Some(one_or_zero("host_systemd", v)?),
    };
    // Under the scope's stop timeout, whose KILL would take the shim before it wrote the code: the caller knows it.
    let host_ask_ms = match f.number("host_ask_ms", MAX_ASK_MS)? {
        None => crate::host::ASK_WITHIN_MS,
        Some(0) => return Err("host_ask_ms: must be at least 1".to_string()),
        Some(n) => n,
    };
    let limit_stats = match f.get("limit_stats") {
        None => None,
        Some(v) => Some(absolute("limit_stats", v)?),
    };
    Ok(Settings {
        io,
        enter,
        deadline_ms,
        grace_ms,
        max_output,
        watch,
        command_pid,
        command,
        pty,
        restart,
        system_bus,
        host_systemd,
        host_ask_ms,
        limit_stats,
    })
}

fn command(f: &Fields) -> Result<Command, String> {
    match f.need("mode")? {
        b"argv" => {
            if f.args.is_empty() {
                return Err("arg: missing (mode=argv needs at least the program)".to_string());
            }
            for key in ["shell", "script"] {
                if f.get(key).is_some() {
                    return Err(format!("{}: only with mode=shell", key));
                }
            }
            Ok(Command::Argv(f.args.iter().map(|a| a.to_vec()).collect()))
        }
        b"shell" => {
            if !f.args.is_empty() {
                return Err("arg: only with mode=argv".to_string());
            }
            let shell = f.need("shell")?;
            if shell.is_empty() {
                return Err("shell: empty".to_string());
            }
            Ok(Command::Shell {
                shell: shell.to_vec(),
                script: f.need("script")?.to_vec(),
            })
        }
        v => Err(format!("mode: expected argv or shell, got {}", shown(v))),
    }
}

fn pty(f: &Fields) -> Result<Option<Pty>, String> {
    let dir = match f.get("pty_dir") {
        Some(v) => absolute("pty_dir", v)?,
        None => {
            for key in ["cols", "rows"] {
                if f.get(key).is_some() {
                    return Err(format!("{}: only with pty_dir", key));
                }
            }
            return Ok(None);
        }
    };
    let side = |key: &str| -> Result<u16, String> {
        let n = f.need_number(key, MAX_SIDE)?;
        if n == 0 {
            return Err(format!("{}: must be at least 1", key));
        }
        Ok(n as u16)
    };
    Ok(Some(Pty {
        dir,
        cols: side("cols")?,
        rows: side("rows")?,
    }))
}

fn restart(f: &Fields) -> Result<Option<Restart>, String> {
    let when = match f.get("restart") {
        None | Some(b"no") => None,
        Some(b"on-failure") => Some(RestartWhen::OnFailure),
        Some(b"always") => Some(RestartWhen::Always),
        Some(v) => {
            return Err(format!(
                "restart: expected no, on-failure or always, got {}",
                shown(v)
            ))
        }
    };
    let when = match when {
        Some(w) => w,
        None => {
            for key in ["restart_max", "restart_delay_ms", LAST_SINGLE] {
                if f.get(key).is_some() {
                    return Err(format!(
                        "{}: only with restart=on-failure or restart=always",
                        key
                    ));
                }
            }
            return Ok(None);
        }
    };
    let max = f.need_number("restart_max", MAX_RESTARTS)?;
    if max == 0 {
        return Err("restart_max: must be at least 1".to_string());
    }
    let delay_ms = f.need_number("restart_delay_ms", MAX_MS)?;
    if delay_ms == 0 {
        return Err("restart_delay_ms: must be more than 0".to_string());
    }
    let delay_max_ms = f.need_number(LAST_SINGLE, MAX_MS)?;
    if delay_max_ms < delay_ms {
        return Err(format!(
            "{}: {} is less than restart_delay_ms ({})",
            LAST_SINGLE, delay_max_ms, delay_ms
        ));
    }
    Ok(Some(Restart {
        when,
        max: max as u32,
        delay_ms,
        delay_max_ms,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(fields: &[&str]) -> Vec<u8> {
        let mut v = Vec::new();
        for f in fields {
            v.extend_from_slice(f.as_bytes());
            v.push(0);
        }
        v
    }

    const BASE: [&str; 9] = [
        "v=1",
        "id=t",
        "io=/tmp",
        "deadline_ms=0",
        "grace_ms=0",
        "max_output=0",
        "watch=inotify",
        "command_pid=0",
        "mode=argv",
    ];

    fn with(extra: &[&str]) -> Vec<u8> {
        let mut all: Vec<&str> = BASE.to_vec();
        all.extend_from_slice(extra);
        all.push("end=");
        input(&all)
    }

    #[test]
    fn takes_a_whole_argv() {
        let s = parse(&with(&["arg=echo", "arg=", "arg=a=b\nc"]), b"t")
            .ok()
            .unwrap();
        match s.command {
            Command::Argv(a) => {
                assert_eq!(a, vec![b"echo".to_vec(), b"".to_vec(), b"a=b\nc".to_vec()])
            }
            _ => panic!(),
        }
    }

    #[test]
    fn names_the_key() {
        let err = |extra: &[&str]| parse(&with(extra), b"t").err().unwrap();
        assert!(err(&["arg=x", "bogus=1"]).contains("unknown key \"bogus\""));
        assert!(err(&["arg=x", "cols=80"]).starts_with("cols:"));
        assert!(err(&[]).starts_with("arg:"));
        assert!(err(&[
            "arg=x",
            "restart=always",
            "restart_max=1",
            "restart_delay_ms=5"
        ])
        .starts_with("restart_delay_max_ms: missing"));
        assert!(parse(&with(&["arg=x"]), b"u")
            .err()
            .unwrap()
            .starts_with("id:"));
        let mut cut = with(&["arg=x"]);
        cut.truncate(cut.len() - 5);
        assert!(parse(&cut, b"t").err().unwrap().contains("cut short"));
    }
}
