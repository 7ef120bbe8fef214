/**
 * The cgroup source on real processes in real cgroups: a setsid +
 * double-forked child is found only through it, and shared cgroups are
 * never taken. Needs a writable cgroup v2 hierarchy (root); skipped with
 * the reason otherwise.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cgroupPopulated, cgroupWritable, findCgroup2Mount } from "../../lib/placement/cgroup-fs.ts";
import { readCgroupMembers, takeCensus, takeSnapshot, type CensusResult } from "../../lib/census/mod.ts";
import { readProcStat } from "../../lib/proc/stat.ts";
import { waitFor } from "../support/wait.ts";

const mount = findCgroup2Mount();
const skipReason = mount === null ? "no cgroup v2 hierarchy is mounted" : cgroupWritable(mount);
if (skipReason) console.log(`census cgroup source: skipped: ${skipReason}`);

const base = `/cs${process.pid}`;
const taskCgroup = `${base}/cs-task-t-1`;
const plainCgroup = `${base}/plain`;
const work = mkdtempSync(join(tmpdir(), "outlive-census-cgroup-"));
const script = join(work, "h.sh");
writeFileSync(script, [`echo $$ > "$1"`, `( setsid sh -c 'echo $$ > "$0"; exec sleep 300' "$2" & )`, "exec sleep 300", ""].join("\n"));

interface Placed { leader: { pid: number; startTime: string }; escapee: number }

async function placeHarness(cgroup: string, name: string): Promise<Placed> {
  const pidFile = join(work, `${name}.escapee`);
  const child = spawn("sh", [script, join(mount!, cgroup, "cgroup.procs"), pidFile], { detached: true, stdio: "ignore" });
  child.unref();
  await waitFor("the escapee's pid", () => existsSync(pidFile) && readFileSync(pidFile, "utf8").endsWith("\n"));
  const escapee = Number(readFileSync(pidFile, "utf8"));
  // The pid is written before the exec, while the short-lived subshells may still run: wait for them to settle.
  await waitFor("the escapee's exec and its parents' exit", async () => {
    const snap = await takeSnapshot();
    const argv = snap.processes.find((p) => p.pid === escapee)?.argv.join(" ");
    return argv === "sleep 300" && !snap.processes.some((p) => p.ppid === child.pid && p.state !== "Z");
  });
  return { leader: { pid: child.pid!, startTime: readProcStat(child.pid!)!.startTime }, escapee };
}

const members = (r: CensusResult) => (r.ok ? r.census.members.map((m) => [m.process.pid, m.why]) : r.error.code);
let inTask: Placed;
let inPlain: Placed;

describe.skipIf(skipReason !== null)("the cgroup source", () => {
  beforeAll(async () => {
    for (const c of [base, taskCgroup, plainCgroup]) mkdirSync(join(mount!, c));
    inTask = await placeHarness(taskCgroup, "task");
    inPlain = await placeHarness(plainCgroup, "plain");
  });
  afterAll(async () => {
    for (const c of [taskCgroup, plainCgroup]) {
      const dir = join(mount!, c);
      if (!existsSync(dir)) continue;
      writeFileSync(join(dir, "cgroup.kill"), "1");
      await waitFor(`${c} to empty`, async () => !(await cgroupPopulated(dir)));
      await waitFor(`${c} to be removed`, () => {
        try {
          rmdirSync(dir);
          return true;
        } catch {
          return false;
        }
      });
    }
    if (existsSync(join(mount!, base))) rmdirSync(join(mount!, base));
    rmSync(work, { recursive: true, force: true });
  });

  it("auto takes an outlive task's cgroup and finds the setsid + double-forked child there, named cgroup member", async () => {
    expect(readProcStat(inTask.escapee)!.ppid).not.toBe(inTask.leader.pid);
    const r = await takeCensus(inTask.leader);
    expect(members(r)).toEqual([[inTask.escapee, "cgroup-member"]]);
    expect(r.ok && r.census.sources).toMatchObject({ parentChain: true, processGroup: true, cgroup: taskCgroup });
  });

  it("none leaves it out, and the child is invisible to the parent chain and the group", async () => {
    const r = await takeCensus(inTask.leader, { cgroup: "none" });
    expect(members(r)).toEqual([]);
    expect(r.ok && r.census.sources).toMatchObject({ cgroup: null, cgroupNote: "the cgroup source was not asked for (none)" });
  });

  it("auto does not take a cgroup that is not an outlive task's; naming it does (as a cgroup path or its folder)", async () => {
    const auto = await takeCensus(inPlain.leader);
    expect(members(auto)).toEqual([]);
    expect(auto.ok && auto.census.sources.cgroupNote).toMatch(/is not an outlive task's/);
    for (const path of [plainCgroup, join(mount!, plainCgroup)]) {
      const named = await takeCensus(inPlain.leader, { cgroup: { path } });
      expect(members(named)).toEqual([[inPlain.escapee, "cgroup-member"]]);
      expect(named.ok && named.census.sources.cgroup).toBe(plainCgroup);
    }
  });

  it("fails closed: a cgroup the leader is not in, the root, and one that holds the caller are never taken", async () => {
    const other = await takeCensus(inPlain.leader, { cgroup: { path: taskCgroup } });
    expect(members(other)).toEqual([]);
    expect(other.ok && other.census.sources.cgroupNote).toMatch(/not in \/cs\d+\/cs-task-t-1/);
    const root = await takeCensus(inPlain.leader, { cgroup: { path: "/" } });
    expect(members(root)).toEqual([]);
    expect(root.ok && root.census.sources.cgroupNote).toMatch(/root cgroup/);
    // The caller is a process of that very cgroup (here the escapee stands in for it): taking it would count the caller's own.
    const caller = await takeCensus(inPlain.leader, { cgroup: { path: base }, callerPid: inTask.escapee });
    expect(members(caller)).toEqual([]);
    expect(caller.ok && caller.census.sources.cgroupNote).toMatch(/holds this process too/);
  });

  it("a member started after the process list was taken is read on its own", async () => {
    const early = await takeSnapshot();
    const late = await placeHarness(taskCgroup, "late");
    const r = await takeCensus(inTask.leader, { snapshot: early });
    const found = r.ok ? r.census.members.map((m) => m.process.pid) : [];
    expect(found).toEqual(expect.arrayContaining([inTask.escapee, late.escapee, late.leader.pid]));
  });

  it("a cgroup that cannot be read gives no answer", () => {
    const r = readCgroupMembers(join(mount!, base, "no-such-cgroup"));
    expect(r.ok || r.error.code).toBe("cgroup-unreadable");
  });
});
