/**
 * The escapee case, as a user runs it: `outlive run --mode daemon
 * --placement cgroup-v2 -- sh h.sh`, where h.sh starts a setsid + double-
 * forked sleep and execs another; then `outlive census <harness pid>`, each
 * a separate process under the default shell.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { CgroupV2Placement, takeSnapshot } from "../../lib/internal.ts";
import { waitFor } from "../support/wait.ts";

const CLI = join(import.meta.dirname, "../../dist/scripts/outlive.js");
const PREFIX = `cc${process.pid}`;
const probe = await new CgroupV2Placement({ prefix: PREFIX }).probe();
if (!probe.ok) console.log(`census CLI cgroup: skipped: ${probe.reason}`);
const work = mkdtempSync(join(tmpdir(), "outlive-census-cli-"));
const flags = ["--storage", join(work, "store"), "--mode", "daemon", "--placement", "cgroup-v2", "--prefix", PREFIX];
const outlive = (...args: string[]) => execFileSync("/bin/sh", ["-c", 'exec "$0" "$@"', process.execPath, CLI, ...args], { encoding: "utf8", cwd: work });
let id: string | null = null;

afterAll(() => {
  if (id) outlive("kill", ...flags, id);
  const escapee = join(work, "escapee.pid");
  if (existsSync(escapee)) {
    try {
      process.kill(Number(readFileSync(escapee, "utf8")), "SIGKILL");
    } catch {
      // Ended with the task's cgroup, as it should be.
    }
  }
  rmSync(work, { recursive: true, force: true });
});

describe.skipIf(!probe.ok)("outlive census on a harness run by outlive run", () => {
  it("lists the setsid + double-forked sleep in the task's cgroup, names the source, and --cgroup none does not", async () => {
    writeFileSync(join(work, "h.sh"), `( setsid sh -c 'echo $$ > ${join(work, "escapee.pid")}; exec sleep 300' & )\nexec sleep 301\n`);
    id = outlive("run", ...flags, "--", "sh", "h.sh").trim();
    const ps = JSON.parse(outlive("ps", ...flags, "--json")) as { id: string; pid: number }[] | { tasks: { id: string; pid: number }[] };
    const tasks = Array.isArray(ps) ? ps : ps.tasks;
    const wrapper = tasks.find((t) => t.id === id)!.pid;
    await waitFor("the escapee's pid", () => existsSync(join(work, "escapee.pid")) && readFileSync(join(work, "escapee.pid"), "utf8").endsWith("\n"));
    const escapee = Number(readFileSync(join(work, "escapee.pid"), "utf8"));
    // The harness is the wrapper's child that runs `sh h.sh`, exec'd into `sleep 301`.
    let harness = 0;
    await waitFor("the harness's exec", () => {
      const line = execFileSync("ps", ["-o", "pid=,args=", "--ppid", String(wrapper)], { encoding: "utf8" }).split("\n").find((l) => l.includes("sleep 301"));
      harness = line ? Number(line.trim().split(/\s+/)[0]) : 0;
      return harness > 0;
    });
    // The pid is written before the exec, while the short-lived subshell may still run: wait for them to settle.
    await waitFor("the escapee's exec and its parents' exit", async () => {
      const snap = await takeSnapshot();
      return snap.processes.find((p) => p.pid === escapee)?.argv.join(" ") === "sleep 300" && !snap.processes.some((p) => p.ppid === harness && p.state !== "Z");
    });
    const listed = outlive("census", String(harness));
    expect(listed).toMatch(new RegExp(`\\n\\s*${escapee}\\s+\\d+\\s+S\\s+cgroup-member\\s+sleep 300\\n`));
    expect(listed).toMatch(new RegExp(`sources: parent chain, process group, cgroup /\\S*${PREFIX}-task-${id}`));
    expect(listed).toMatch(/not under PID: /);
    const json = JSON.parse(outlive("census", String(harness), "--json"));
    expect(json.sources.cgroup).toMatch(new RegExp(`${PREFIX}-task-${id}$`));
    expect(json.members.map((m: { pid: number; why: string }) => [m.pid, m.why])).toEqual([[escapee, "cgroup-member"]]);
    const without = outlive("census", String(harness), "--cgroup", "none");
    expect(without).not.toContain(String(escapee));
    expect(without).toContain("no cgroup: the cgroup source was not asked for (none)");
  });
});
