import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import { join } from "node:path";
import { parseProcStat } from "../proc/stat.ts";
import type { TaskRecord } from "../store/record/record.ts";
import { type ListeningPort, readListeningSockets } from "./proc-net.ts";

/**
 * The processes of each task: every process of its cgroup (and the cgroups
 * below it), else (a process group) every member of its group and every
 * descendant of its leader, so a child that left the group with setsid is
 * counted too. One scan of /proc serves all the tasks that need one.
 */
export function taskProcesses(records: readonly TaskRecord[], procRoot = "/proc"): Map<string, number[]> {
  const out = new Map<string, number[]>();
  const byGroup: TaskRecord[] = [];
  for (const r of records) {
    if (r.pid === null) continue;
    const dir = r.location.cgroupDir;
    if (dir && r.placement !== "process-group") out.set(r.id, cgroupMembers(dir));
    else byGroup.push(r);
  }
  if (byGroup.length === 0) return out;
  const stats = scanStats(procRoot);
  const children = new Map<number, number[]>();
  const groups = new Map<number, number[]>();
  for (const s of stats) {
    children.set(s.ppid, [...(children.get(s.ppid) ?? []), s.pid]);
    groups.set(s.pgid, [...(groups.get(s.pgid) ?? []), s.pid]);
  }
  const alive = new Set(stats.map((s) => s.pid));
  for (const r of byGroup) {
    const found = new Set<number>(groups.get(r.pgid ?? r.pid!) ?? []);
    const queue = alive.has(r.pid!) ? [r.pid!] : [];
    while (queue.length > 0) {
      const pid = queue.pop()!;
      found.add(pid);
      for (const c of children.get(pid) ?? []) if (!found.has(c)) queue.push(c);
    }
    out.set(r.id, [...found]);
  }
  return out;
}

/** Every pid in a cgroup v2 directory and its descendants; none when it is gone. */
function cgroupMembers(dir: string): number[] {
  const pids: number[] = [];
  const walk = (d: string) => {
    try {
      for (const line of readFileSync(join(d, "cgroup.procs"), "utf8").split("\n")) if (line) pids.push(Number(line));
      for (const e of readdirSync(d, { withFileTypes: true })) if (e.isDirectory()) walk(join(d, e.name));
    } catch {
      // Gone meanwhile: nothing more of it.
    }
  };
  walk(dir);
  return pids;
}

function scanStats(procRoot: string): Array<{ pid: number; ppid: number; pgid: number }> {
  const out: Array<{ pid: number; ppid: number; pgid: number }> = [];
  let names: string[];
  try {
    names = readdirSync(procRoot);
  } catch {
    return out;
  }
  for (const name of names) {
    if (name.charCodeAt(0) < 48 || name.charCodeAt(0) > 57) continue;
    try {
      const s = parseProcStat(readFileSync(`${procRoot}/${name}/stat`, "latin1"));
      if (s) out.push({ pid: s.pid, ppid: s.ppid, pgid: s.pgid });
    } catch {
      // Ended between the listing and the read.
    }
  }
  return out;
}

/** The socket inodes a process holds open (`/proc/PID/fd/N` → `socket:[INODE]`); none when it cannot be read. */
export function socketInodes(pid: number, procRoot = "/proc"): number[] {
  const dir = `${procRoot}/${pid}/fd`;
  let fds: string[];
  try {
    fds = readdirSync(dir);
  } catch {
    return [];
  }
  const out: number[] = [];
  for (const fd of fds) {
    let target: string;
    try {
      target = readlinkSync(`${dir}/${fd}`);
    } catch {
      continue;
    }
    if (target.startsWith("socket:[")) out.push(Number(target.slice(8, -1)));
  }
  return out;
}

/** Whether `pid` is outlive-shim (its comm, which the shim sets by exec'ing itself under its name). */
function isShim(pid: number, procRoot: string): boolean {
  try {
    return readFileSync(`${procRoot}/${pid}/comm`, "latin1") === "outlive-shim\n";
  } catch {
    return false;
  }
}

/** The network namespace of a process (`/proc/PID/ns/net`), to read its tables once per namespace. */
function netNamespace(pid: number, procRoot: string): string | null {
  try {
    return readlinkSync(`${procRoot}/${pid}/ns/net`);
  } catch {
    return null;
  }
}

/**
 * Every listening TCP and bound UDP socket of each running task's
 * processes, read from /proc (socket inodes against the processes'
 * descriptors), never by running `ss` or `lsof`. Sorted by port, then
 * protocol and address; a socket shared by several processes is said once.
 * A process whose descriptors cannot be read (another user's) adds nothing.
 *
 * @example
 * ```ts
 * import { createServer } from "node:net";
 * import { portsOfTasks } from "./task-ports.ts";
 * const server = createServer().listen(0, "127.0.0.1");
 * await new Promise((r) => server.once("listening", r));
 * const me = { id: "t-me", pid: process.pid, pgid: process.pid, placement: "process-group", location: {} } as never;
 * const port = (server.address() as { port: number }).port;
 * console.log(portsOfTasks([me]).get("t-me")!.some((p) => p.port === port && p.address === "127.0.0.1")); // true
 * server.close();
 * ```
 */
export function portsOfTasks(records: readonly TaskRecord[], procRoot = "/proc"): Map<string, ListeningPort[]> {
  const out = new Map<string, ListeningPort[]>();
  const members = taskProcesses(records, procRoot);
  const tables = new Map<string, Map<number, ListeningPort>>();
  const leaders = new Map(records.map((r) => [r.id, r.pid]));
  for (const [id, pids] of members) {
    const seen = new Map<string, ListeningPort>();
    for (const pid of pids) {
      // outlive-shim, the task's leader, listens on nothing: its dozen descriptors are not worth a readlink each.
      if (pid === leaders.get(id) && isShim(pid, procRoot)) continue;
      const inodes = socketInodes(pid, procRoot);
      if (inodes.length === 0) continue;
      const ns = netNamespace(pid, procRoot) ?? `pid:${pid}`;
      let table = tables.get(ns);
      if (!table) {
        table = readListeningSockets(pid, procRoot);
        tables.set(ns, table);
      }
      for (const inode of inodes) {
        const port = table.get(inode);
        if (port) seen.set(`${port.proto} ${port.address} ${port.port}`, port);
      }
    }
    out.set(id, [...seen.values()].sort((a, b) => a.port - b.port || a.proto.localeCompare(b.proto) || a.address.localeCompare(b.address)));
  }
  return out;
}

/**
 * A port as a person reads it: `127.0.0.1:5173`, `[::1]:5173`, with `/udp`
 * for UDP. Pure.
 *
 * @example
 * ```ts
 * import { portText } from "./task-ports.ts";
 * console.log(portText({ proto: "tcp", address: "::", port: 5173 }), portText({ proto: "udp", address: "0.0.0.0", port: 53 })); // "[::]:5173" "0.0.0.0:53/udp"
 * ```
 */
export function portText(p: ListeningPort): string {
  const host = p.address.includes(":") ? `[${p.address}]` : p.address;
  return `${host}:${p.port}${p.proto === "udp" ? "/udp" : ""}`;
}
