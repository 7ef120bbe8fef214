import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { afterAll, describe, expect, it, onTestFinished } from "vitest";
import { parseNetTable } from "../../lib/ports/proc-net.ts";
import { portsOfTasks, portText } from "../../lib/ports/task-ports.ts";
import type { TaskRecord } from "../../lib/store/record/record.ts";
import { waitFor } from "../support/wait.ts";

// Real listeners in process groups of their own, found from /proc the way ps finds a task's ports.
const groups: ChildProcess[] = [];
afterAll(() => {
  for (const g of groups) {
    try {
      process.kill(-g.pid!, "SIGKILL");
    } catch {
      // Ended already.
    }
  }
});

/** A node script in a process group of its own, as a task's leader would be; its listening lines on stdout. */
function group(script: string): { child: ChildProcess; record: TaskRecord; said: () => string } {
  const child = spawn(process.execPath, ["-e", script], { detached: true, stdio: ["ignore", "pipe", "inherit"] });
  groups.push(child);
  let out = "";
  child.stdout!.on("data", (d) => (out += d));
  const record = { id: `t-${child.pid}`, pid: child.pid!, pgid: child.pid!, placement: "process-group", location: {}, state: "running" } as unknown as TaskRecord;
  return { child, record, said: () => out };
}

describe("a task's ports, from /proc", () => {
  it("parses /proc/net's tables: listeners and unconnected UDP only, IPv6 written short, IPv4-mapped as IPv4", () => {
    const head = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n";
    const row = (local: string, st: string, inode: number) => `   0: ${local} 00000000:0000 ${st} 00000000:00000000 00:00000000 00000000  1000        0 ${inode} 1 0 100 0 0 10 0\n`;
    const tcp = parseNetTable(head + row("0100007F:1435", "0A", 1) + row("0100007F:9C40", "01", 2) + row("00000000:0050", "0A", 3), "tcp");
    expect([...tcp.values()]).toEqual([{ proto: "tcp", address: "127.0.0.1", port: 5173 }, { proto: "tcp", address: "0.0.0.0", port: 80 }]);
    const six = parseNetTable(head + row("00000000000000000000000001000000:1F90", "0A", 4) + row("00000000000000000000000000000000:0035", "07", 5)
      + row("0000000000000000FFFF00000100007F:1F91", "0A", 6), "tcp");
    expect([...six.values()].map(portText)).toEqual(["[::1]:8080", "127.0.0.1:8081"]);
    expect([...parseNetTable(head + row("00000000000000000000000000000000:0035", "07", 5), "udp").values()]).toEqual([{ proto: "udp", address: "::", port: 53 }]);
  });

  it("finds every listener of the group, a child's and a setsid'd grandchild's, TCP and UDP, IPv4 and IPv6, and none of another group", async () => {
    const t = group(`
      const net = require("node:net"), dgram = require("node:dgram"), { spawn } = require("node:child_process");
      const a = net.createServer().listen(0, "127.0.0.1", () => console.log("tcp4", a.address().port));
      const b = net.createServer().listen(0, "::1", () => console.log("tcp6", b.address().port));
      const u = dgram.createSocket("udp4").bind(0, "127.0.0.1", () => console.log("udp4", u.address().port));
      const c = net.connect(a.address ? 1 : 1, "127.0.0.1"); c.on("error", () => {});
      spawn(process.execPath, ["-e", "const s = require('node:net').createServer().listen(0, '127.0.0.1', () => console.log('child', s.address().port)); setInterval(() => {}, 1e6)"], { stdio: ["ignore", "inherit", "inherit"] });
      const d = spawn(process.execPath, ["-e", "const s = require('node:net').createServer().listen(0, '127.0.0.1', () => console.log('setsid', s.address().port)); setInterval(() => {}, 1e6)"], { stdio: ["ignore", "inherit", "inherit"], detached: true });
      console.log("setsidpid", d.pid);
      setInterval(() => {}, 1e6);`);
    const other = group(`const s = require("node:net").createServer().listen(0, "127.0.0.1", () => console.log("other", s.address().port)); setInterval(() => {}, 1e6);`);
    const said = () => Object.fromEntries(t.said().trim().split("\n").filter(Boolean).map((l) => l.split(" ")).map(([k, v]) => [k, Number(v)]));
    const ports = () => Object.fromEntries(Object.entries(said()).filter(([k]) => k !== "setsidpid"));
    // The setsid'd grandchild is in a session of its own, which the group's kill at the end never reaches.
    onTestFinished(() => {
      try {
        process.kill(said().setsidpid, "SIGKILL");
      } catch {
        // never started, or gone
      }
    });
    await waitFor("five listeners", () => Object.keys(ports()).length === 5);
    await waitFor("the other group's listener", () => other.said().includes("other"));
    const p = ports();
    const found = portsOfTasks([t.record, other.record]);
    expect(found.get(t.record.id)).toEqual(expect.arrayContaining([
      { proto: "tcp", address: "127.0.0.1", port: p.tcp4 },
      { proto: "tcp", address: "::1", port: p.tcp6 },
      { proto: "udp", address: "127.0.0.1", port: p.udp4 },
      { proto: "tcp", address: "127.0.0.1", port: p.child },
      { proto: "tcp", address: "127.0.0.1", port: p.setsid },
    ]));
    expect(found.get(t.record.id)).toHaveLength(5);
    const otherPort = Number(other.said().trim().split(" ")[1]);
    expect(found.get(other.record.id)).toEqual([{ proto: "tcp", address: "127.0.0.1", port: otherPort }]);
    expect(found.get(t.record.id)!.map((x) => x.port)).not.toContain(otherPort);
    // Sorted by port, for a stable PORTS column.
    const sorted = [...found.get(t.record.id)!].sort((a, b) => a.port - b.port);
    expect(found.get(t.record.id)).toEqual(sorted);
  });

  it("reads no ss or lsof: only /proc", () => {
    const source = ["proc-net.ts", "task-ports.ts"].map((f) => readFileSync(`${__dirname}/../../lib/ports/${f}`, "utf8")).join("\n");
    expect(source).not.toMatch(/child_process|execFile|spawn\(/);
  });

  it("a task that is gone, or whose leader never was, has none", () => {
    const gone = { id: "t-gone", pid: 4_194_000, pgid: 4_194_000, placement: "process-group", location: {}, state: "running" } as unknown as TaskRecord;
    const cgroupGone = { id: "t-cg", pid: 4_194_001, pgid: 4_194_001, placement: "cgroup-v2", location: { cgroupDir: "/nonexistent/cg" }, state: "running" } as unknown as TaskRecord;
    const found = portsOfTasks([gone, cgroupGone]);
    expect(found.get("t-gone")).toEqual([]);
    expect(found.get("t-cg")).toEqual([]);
  });
});
