//! The system manager's state (`SystemState`: `running`, `stopping`, ...),
//! asked of systemd over the system bus directly: what `systemctl
//! is-system-running` asks, without exec'ing a dynamically linked program
//! of a few MiB. At a shutdown on a slow machine (a TCG guest on a loaded
//! host) that exec alone took longer than a scope's 5 s between TERM and
//! KILL; a connect and three small messages take milliseconds. Only what
//! this one question needs of the D-Bus wire format (little-endian, as the
//! bus answers on x86): AUTH EXTERNAL, Hello, and
//! org.freedesktop.DBus.Properties.Get on the manager. Any surprise is an
//! error, and the caller asks systemctl instead.

use crate::sys;
use std::time::Duration;

/// The words of an error that is the time running out (the bus was there but did not answer): the caller
/// does not ask systemctl then, which would ask the same bus.
pub const TIMED_OUT: &str = "no answer in time";

/// The state systemd reports on the bus at `bus`, or why it could not be had within `within`.
pub fn system_state(bus: &[u8], within: Duration) -> Result<Vec<u8>, String> {
    let until = crate::clock::now() + within;
    let fd = sys::connect_unix(bus).map_err(|e| format!("connect: {}", sys::why(&e)))?;
    let mut conn = Conn {
        fd: fd.raw(),
        until,
        buf: Vec::new(),
    };
    // SAFETY: no arguments; getuid cannot fail.
    let uid = unsafe { libc::getuid() };
    let hex: String = uid
        .to_string()
        .bytes()
        .map(|b| format!("{:02x}", b))
        .collect();
    conn.send(format!("\0AUTH EXTERNAL {}\r\n", hex).as_bytes())?;
    let line = conn.line()?;
    if !line.starts_with(b"OK ") {
        return Err(format!("auth: {}", String::from_utf8_lossy(&line)));
    }
    let mut out = b"BEGIN\r\n".to_vec();
    out.extend(call(
        1,
        "/org/freedesktop/DBus",
        "org.freedesktop.DBus",
        "Hello",
        "org.freedesktop.DBus",
        None,
    ));
    out.extend(call(
        2,
        "/org/freedesktop/systemd1",
        "org.freedesktop.DBus.Properties",
        "Get",
        "org.freedesktop.systemd1",
        Some(&["org.freedesktop.systemd1.Manager", "SystemState"]),
    ));
    conn.send(&out)?;
    loop {
        let (kind, reply_to, msg, body_at) = conn.message()?;
        if reply_to != Some(2) {
            continue; // Hello's answer, NameAcquired, ...
        }
        if kind != 2 {
            return Err("the manager answered with an error".into());
        }
        return variant_string(&msg, body_at).ok_or_else(|| "an answer not a string".into());
    }
}

struct Conn {
    fd: libc::c_int,
    until: Duration,
    buf: Vec<u8>,
}

impl Conn {
    fn wait(&self, events: libc::c_short) -> Result<(), String> {
        let left = self.until.saturating_sub(crate::clock::now());
        let mut p = [libc::pollfd {
            fd: self.fd,
            events,
            revents: 0,
        }];
        if left.is_zero() {
            return Err(TIMED_OUT.into());
        }
        match sys::poll(&mut p, left.as_millis().max(1) as libc::c_int) {
            Ok(1) => Ok(()),
            Ok(_) => Err(TIMED_OUT.into()),
            Err(e) => Err(format!("poll: {}", sys::why(&e))),
        }
    }

    fn send(&mut self, mut data: &[u8]) -> Result<(), String> {
        while !data.is_empty() {
            self.wait(libc::POLLOUT)?;
            match sys::write(self.fd, data) {
                Ok(n) if n > 0 => data = &data[n..],
                Ok(_) => return Err("the bus closed".into()),
                Err(e) if e.raw_os_error() == Some(libc::EAGAIN) => {}
                Err(e) => return Err(sys::why(&e)),
            }
        }
        Ok(())
    }

    /// At least `n` bytes buffered.
    fn fill(&mut self, n: usize) -> Result<(), String> {
        while self.buf.len() < n {
            if n > 1 << 20 {
                return Err("an answer too long".into());
            }
            self.wait(libc::POLLIN)?;
            let mut chunk = [0u8; 4096];
            match sys::read(self.fd, &mut chunk) {
                Ok(0) => return Err("the bus closed".into()),
                Ok(k) => self.buf.extend_from_slice(&chunk[..k]),
                Err(e) if e.raw_os_error() == Some(libc::EAGAIN) => {}
                Err(e) => return Err(sys::why(&e)),
            }
        }
        Ok(())
    }

    fn line(&mut self) -> Result<Vec<u8>, String> {
        loop {
            if let Some(at) = self.buf.windows(2).position(|w| w == b"\r\n") {
                let line = self.buf[..at].to_vec();
                self.buf.drain(..at + 2);
                return Ok(line);
            }
            let want = self.buf.len() + 1;
            self.fill(want)?;
        }
    }

    /// One message: its type, the serial it answers, its bytes and where its body begins.
    fn message(&mut self) -> Result<(u8, Option<u32>, Vec<u8>, usize), String> {
        self.fill(16)?;
        if self.buf[0] != b'l' {
            return Err("a big-endian answer".into());
        }
        let body_len = u32_at(&self.buf, 4) as usize;
        let fields_len = u32_at(&self.buf, 12) as usize;
        let body_at = align(16 + fields_len, 8);
        self.fill(body_at + body_len)?;
        let msg: Vec<u8> = self.buf.drain(..body_at + body_len).collect();
        Ok((
            msg[1],
            reply_serial(&msg[16..16 + fields_len], 16),
            msg,
            body_at,
        ))
    }
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

fn align(n: usize, to: usize) -> usize {
    (n + to - 1) / to * to
}

fn pad(m: &mut Vec<u8>, to: usize) {
    while m.len() % to != 0 {
        m.push(0);
    }
}

fn put_string(m: &mut Vec<u8>, s: &str) {
    pad(m, 4);
    m.extend_from_slice(&(s.len() as u32).to_le_bytes());
    m.extend_from_slice(s.as_bytes());
    m.push(0);
}

/// A header field: its code and a variant of signature `sig` holding `value`.
fn field(m: &mut Vec<u8>, code: u8, sig: u8, value: &str) {
    pad(m, 8);
    m.extend_from_slice(&[code, 1, sig, 0]);
    if sig == b'g' {
        m.push(value.len() as u8);
        m.extend_from_slice(value.as_bytes());
        m.push(0);
    } else {
        put_string(m, value);
    }
}

/// A METHOD_CALL message with serial `serial`, and string arguments.
fn call(
    serial: u32,
    path: &str,
    interface: &str,
    member: &str,
    destination: &str,
    args: Option<&[&str]>,
) -> Vec<u8> {
    let mut body = Vec::new();
    for a in args.unwrap_or(&[]) {
        put_string(&mut body, a);
    }
    let mut m = vec![b'l', 1, 0, 1];
    m.extend_from_slice(&(body.len() as u32).to_le_bytes());
    m.extend_from_slice(&serial.to_le_bytes());
    m.extend_from_slice(&[0, 0, 0, 0]); // the fields' length, set below
    field(&mut m, 1, b'o', path);
    field(&mut m, 2, b's', interface);
    field(&mut m, 3, b's', member);
    field(&mut m, 6, b's', destination);
    if let Some(a) = args {
        field(&mut m, 8, b'g', &"s".repeat(a.len()));
    }
    let fields_len = (m.len() - 16) as u32;
    m[12..16].copy_from_slice(&fields_len.to_le_bytes());
    pad(&mut m, 8);
    m.extend_from_slice(&body);
    m
}

/// The REPLY_SERIAL header field (code 5, a `u`), if any. `base`: the fields' offset in the message (alignment counts from the message's start).
fn reply_serial(fields: &[u8], base: usize) -> Option<u32> {
    let mut at = 0;
    while at < fields.len() {
        at = align(base + at, 8) - base;
        if at + 4 > fields.len() {
            return None;
        }
        let code = fields[at];
        let sig_len = fields[at + 1] as usize;
        let sig = fields.get(at + 2..at + 2 + sig_len)?.to_vec();
        let mut v = at + 2 + sig_len + 1;
        match sig.as_slice() {
            b"u" => {
                v = align(base + v, 4) - base;
                let value = u32_at(fields, v);
                if code == 5 {
                    return Some(value);
                }
                v += 4;
            }
            b"s" | b"o" => {
                v = align(base + v, 4) - base;
                v += 4 + u32_at(fields, v) as usize + 1;
            }
            b"g" => v += 1 + *fields.get(v)? as usize + 1,
            _ => return None,
        }
        at = v;
    }
    None
}

/// A body that is one variant holding a string (`v` of `s`).
fn variant_string(msg: &[u8], body_at: usize) -> Option<Vec<u8>> {
    let body = msg.get(body_at..)?;
    if body.len() < 3 || body[0] != 1 || body[1] != b's' || body[2] != 0 {
        return None;
    }
    let at = align(body_at + 3, 4);
    let len = u32_at(msg, at) as usize;
    msg.get(at + 4..at + 4 + len).map(|s| s.to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_reads_back_its_own_serial_and_layout() {
        let m = call(7, "/a", "b.c", "D", "e.f", Some(&["x", "yz"]));
        assert_eq!(&m[..4], &[b'l', 1, 0, 1]);
        assert_eq!(u32_at(&m, 8), 7);
        let fields_len = u32_at(&m, 12) as usize;
        let body_at = align(16 + fields_len, 8);
        assert_eq!(m.len() - body_at, u32_at(&m, 4) as usize);
        // The body: "x" then "yz", each a u32 length, the bytes and a NUL, 4-aligned.
        assert_eq!(&m[body_at..body_at + 6], &[1, 0, 0, 0, b'x', 0]);
        assert_eq!(&m[body_at + 8..body_at + 15], &[2, 0, 0, 0, b'y', b'z', 0]);
    }

    #[test]
    fn a_reply_serial_is_found_among_the_fields() {
        // A METHOD_RETURN as a bus sends it: REPLY_SERIAL 2, DESTINATION, SIGNATURE v.
        let mut m = vec![b'l', 2, 1, 1, 0, 0, 0, 0, 9, 0, 0, 0, 0, 0, 0, 0];
        pad(&mut m, 8);
        m.extend_from_slice(&[5, 1, b'u', 0]);
        m.extend_from_slice(&2u32.to_le_bytes());
        field(&mut m, 6, b's', ":1.42");
        field(&mut m, 8, b'g', "v");
        let fields_len = m.len() - 16;
        m[12..16].copy_from_slice(&(fields_len as u32).to_le_bytes());
        pad(&mut m, 8);
        let body_at = m.len();
        m.extend_from_slice(&[1, b's', 0, 0]);
        m.extend_from_slice(&8u32.to_le_bytes());
        m.extend_from_slice(b"stopping\0");
        assert_eq!(reply_serial(&m[16..16 + fields_len], 16), Some(2));
        assert_eq!(
            variant_string(&m, body_at).as_deref(),
            Some(&b"stopping"[..])
        );
    }
}
