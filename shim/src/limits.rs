//! What a task's CPU and pids limits did, kept past its cgroup: as the task
//! ends, the shim copies its own cgroup's `pids.events` (forks refused at
//! `pids.max`) and `cpu.stat` (throttled periods and time) into `io/`, since a
//! systemd scope's cgroup is removed the moment it empties, maybe while no
//! supervisor runs to read it.

use crate::sys;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;

/// The shim's own cgroup v2 path (`/proc/self/cgroup`'s `0::` line), e.g. `/outlive/outlive-task-t-1`.
fn own_cgroup() -> Option<Vec<u8>> {
    let text = std::fs::read("/proc/self/cgroup").ok()?;
    text.split(|&b| b == b'\n')
        .find(|l| l.starts_with(b"0::"))
        .map(|l| l[3..].to_vec())
}

/// Copies the counters of the shim's cgroup under `mount` into `io/`; a file that cannot be read is left out.
pub fn copy(io: &[u8], mount: &[u8]) {
    let cgroup = match own_cgroup() {
        Some(c) if c.first() == Some(&b'/') => c,
        _ => return,
    };
    for name in [&b"pids.events"[..], &b"cpu.stat"[..]] {
        let mut from = mount.to_vec();
        from.extend_from_slice(&cgroup);
        from.push(b'/');
        from.extend_from_slice(name);
        if let Ok(data) = std::fs::read(OsStr::from_bytes(&from)) {
            let mut tmp = name.to_vec();
            tmp.extend_from_slice(b".tmp");
            let _ = sys::replace_file(&sys::join(io, &tmp), &sys::join(io, name), &data, 0o600);
        }
    }
}
