import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ModuleCgroup } from "../../harness/inside/daemon/module-cgroup.ts";
import { chooseModuleKill, eventsSayFrozen } from "../../harness/inside/daemon/module-kill.ts";
import { cgroupProcs, findCgroup2Mount, killCgroup } from "../../lib/placement/cgroup-fs.ts";
import { readProcStat } from "../../lib/proc/stat.ts";
import { runToEnd } from "../support/run-to-end.ts";

describe("chooseModuleKill: how the daemon ends a module's cgroup", () => {
  it("auto takes cgroup.kill where the kernel has it (5.14+)", () => {
    expect(chooseModuleKill("auto", { kill: true, freeze: true })).toEqual({ method: "cgroup.kill" });
  });
  it("auto freezes and kills each pid where cgroup.kill is missing (5.2 to 5.13)", () => {
    expect(chooseModuleKill("auto", { kill: false, freeze: true })).toEqual({ method: "freeze-and-kill" });
  });
  it("refuses with the reason when neither is there (before 5.2): a pid-by-pid kill would race the forks", () => {
    const r = chooseModuleKill("auto", { kill: false, freeze: false });
    expect("error" in r && r.error).toMatch(/neither cgroup\.kill \(Linux 5\.14\) nor cgroup\.freeze \(Linux 5\.2\)/);
  });
  it("a method asked for by name needs its own file", () => {
    expect(chooseModuleKill("freeze-and-kill", { kill: true, freeze: true })).toEqual({ method: "freeze-and-kill" });
    expect(chooseModuleKill("cgroup.kill", { kill: false, freeze: true })).toEqual({ error: expect.stringMatching(/no cgroup\.kill .*older than Linux 5\.14/) });
    expect(chooseModuleKill("freeze-and-kill", { kill: true, freeze: false })).toEqual({ error: expect.stringMatching(/no cgroup\.freeze/) });
  });
  it("reads `frozen 1` from cgroup.events, not `frozen 0` or a populated line", () => {
    expect(eventsSayFrozen("populated 1\nfrozen 1\n")).toBe(true);
    expect(eventsSayFrozen("populated 1\nfrozen 0\n")).toBe(false);
    expect(eventsSayFrozen("")).toBe(false);
  });
});

describe("killCgroup on a cgroup without cgroup.kill (a kernel before 5.14)", () => {
  it("writes nothing and answers at once from cgroup.events, so systemd's own kill runs next", async () => {
    // A directory shaped like such a cgroup: cgroup.events and no cgroup.kill (this host's kernel has it everywhere).
    const dir = mkdtempSync(join(tmpdir(), "outlive-nokill-"));
    try {
      writeFileSync(join(dir, "cgroup.events"), "populated 1\nfrozen 0\n");
      const started = Date.now();
      expect(await killCgroup(dir, 5000)).toBe(false);
      expect(Date.now() - started).toBeLessThan(1000);
      expect(existsSync(join(dir, "cgroup.kill"))).toBe(false);
      writeFileSync(join(dir, "cgroup.events"), "populated 0\nfrozen 0\n");
      expect(await killCgroup(dir, 5000)).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

const mount = findCgroup2Mount();
const unavailable = ModuleCgroup.unavailable(mount ?? undefined);
// The freezer (Linux 5.2) shows as cgroup.freeze in every cgroup but the root.
const child = mount ? readdirSync(mount, { withFileTypes: true }).find((e) => e.isDirectory()) : undefined;
const noFreezer = !unavailable && child && !existsSync(join(mount!, child.name, "cgroup.freeze")) ? `no cgroup.freeze in ${join(mount!, child.name)} (Linux before 5.2)` : null;
const why = unavailable ?? noFreezer;
if (why) console.log(`test/harness/module-kill: skipping the real freeze-and-kill: ${why}`);

describe.skipIf(why !== null)("freeze-and-kill on a real cgroup: what the daemon does on a kernel without cgroup.kill", () => {
  it("ends setsid and double-forked children, thaws the cgroup, and the next module runs in it", async () => {
    const cgroup = ModuleCgroup.create(`outlive-freezekill-${process.pid}`, mount!, "freeze-and-kill");
    try {
      expect(existsSync(join(cgroup.dir, "cgroup.freeze"))).toBe(true);
      const script = [
        "setsid sleep 300 &",
        "( setsid sh -c 'sleep 301 & exit 0' & )",
        "trap '' TERM",
        "echo ready; exec sleep 302",
      ].join("\n");
      const module = spawn(cgroup.enterArgv()[0], [...cgroup.enterArgv().slice(1), "sh", "-c", script], { stdio: ["ignore", "pipe", "inherit"] });
      await new Promise<void>((resolve) => module.stdout!.on("data", (d) => String(d).includes("ready") && resolve()));
      // Settled: the three sleeps and nothing else (the sh between setsid and its own sleep, or the
      // subshell, is gone). Counting sessions alone let a snapshot of 3 meet a kill of 4 under CI's load.
      const settled = (pids: number[]) => pids.length === 3 && pids.every((p) => readProcStat(p)?.comm === "sleep");
      let before: number[] = [];
      for (let i = 0; i < 250 && !settled((before = cgroupProcs(cgroup.dir))); i++) {
        await new Promise((r) => setTimeout(r, 20));
      }
      expect(before.map((p) => readProcStat(p)?.comm)).toEqual(["sleep", "sleep", "sleep"]);
      expect(new Set(before.map((p) => readProcStat(p)?.sid)).size).toBe(3);

      const result = await cgroup.kill();
      expect(result).toMatchObject({ method: "freeze-and-kill", empty: true });
      expect(result.killed).toBe(before.length);
      expect(cgroupProcs(cgroup.dir)).toEqual([]);
      expect(before.filter((p) => readProcStat(p) !== null && readProcStat(p)!.state !== "Z")).toEqual([]);
      expect(readFileSync(join(cgroup.dir, "cgroup.freeze"), "utf8").trim()).toBe("0");

      // Thawed: the next module enters the same cgroup and runs.
      const [enter, ...enterArgs] = cgroup.enterArgv();
      const out = await runToEnd(enter!, [...enterArgs, "sh", "-c", "echo next"], { timeoutMs: 10_000 });
      expect(out).toEqual({ status: 0, signal: null, stdout: "next\n", stderr: "", error: undefined });
    } finally {
      await cgroup.remove();
    }
  }, 20_000);
});
