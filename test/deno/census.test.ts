// The census on Deno 2: the snapshot and "under a leader" on real
// processes, through the same stand-in harness the vitest files use.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isInterpreter, mayRetireIdle, npxTitle, pickLeaderCgroup, readLaunchRecord, takeCensus, takeSnapshot, underLeader } from "../../lib/census/mod.ts";
import { launchAgent, mayRetireAgent, readLaunchRecordFile, retireIdleAgent } from "../../lib/agent/mod.ts";
import { CgroupV2Placement } from "../../lib/placement/cgroup-v2/cgroup-v2.ts";
import { cgroupPopulated, cgroupWritable, findCgroup2Mount } from "../../lib/placement/cgroup-fs.ts";
import { Supervisor } from "../../lib/supervisor/supervisor.ts";
import { readProcStat } from "../../lib/proc/stat.ts";
import { UNREAPED_CHILD } from "../../harness/inside/kits/unreaped-child.ts";
import { endStarted, startHarness, started, waitFor } from "../census/harness-process.ts";

Deno.test("snapshot: complete, exact argv, start times", async () => {
  const snap = await takeSnapshot();
  assert.equal(snap.source, "proc");
  assert.equal(snap.complete, true);
  const me = snap.processes.find((p) => p.pid === process.pid);
  assert.ok(me, "this process is in the snapshot");
  assert.match(me.startTime ?? "", /^\d+$/);
  assert.ok(me.argv.length > 0);
});

Deno.test("under a leader: same-group worker, setsid child, group member reparented to init, zombie skipped", async () => {
  const dir = mkdtempSync(join(tmpdir(), "census-deno-"));
  try {
    const pidFile = join(dir, "orphan.pid");
    const h = await startHarness(
      [{ argv: ["sleep", "330"] }, { argv: ["sleep", "331"], setsid: true }, { argv: ["sh", "-c", `sleep 332 & echo $! > ${pidFile}`] }],
      { shellPrefix: UNREAPED_CHILD },
    );
    await waitFor(() => {
      try {
        return readFileSync(pidFile, "utf8").endsWith("\n") && readProcStat(h.children[2]) === null;
      } catch {
        return false;
      }
    });
    const orphan = Number(readFileSync(pidFile, "utf8"));
    started.add(orphan);
    let zombie = 0;
    await waitFor(async () => {
      zombie = (await takeSnapshot()).processes.find((p) => p.ppid === h.pid && p.state === "Z")?.pid ?? 0;
      return zombie !== 0;
    });
    const r = underLeader(await takeSnapshot(), { pid: h.pid, startTime: h.startTime });
    assert.ok(r.ok, "the census answers");
    const why = new Map(r.census.members.map((m) => [m.process.pid, m.why]));
    assert.equal(why.get(h.children[0]), "child-chain");
    assert.equal(why.get(h.children[1]), "child-chain");
    assert.equal(why.get(orphan), "group-member");
    assert.equal(why.has(zombie), false);
    const decision = await mayRetireIdle({ pid: h.pid, startTime: h.startTime }, null);
    assert.equal(decision.verdict, "keep");
  } finally {
    await endStarted();
    rmSync(dir, { recursive: true, force: true });
  }
});

Deno.test("under a leader: a direct-child server lets an idle harness retire; a wrong start time gives no answer", async () => {
  try {
    const record = await readLaunchRecord({
      agent: "other",
      cwd: "/",
      env: { PATH: process.env.PATH },
      servers: [{ name: "s", command: "sleep", args: ["333"] }],
    });
    const h = await startHarness([{ argv: ["sleep", "333"] }]);
    await waitFor(() => readProcStat(h.children[0])?.comm === "sleep");
    const decision = await mayRetireIdle({ pid: h.pid, startTime: h.startTime }, record);
    assert.equal(decision.verdict, "retire", JSON.stringify(decision));
    const other = await mayRetireIdle({ pid: h.pid, startTime: String(Number(h.startTime) + 1) }, record);
    assert.equal(other.reason?.code, "leader-identity-changed");
  } finally {
    await endStarted();
  }
});

Deno.test("versioned interpreters and npm's npx title", () => {
  assert.equal(isInterpreter("/usr/bin/python3.11", ["python"]), true);
  assert.equal(isInterpreter("python3-config", ["python"]), false);
  assert.equal(npxTitle({ command: "npx", args: ["-y", "pkg", "--stdio"] }), "npm exec pkg --stdio");
  assert.equal(npxTitle({ command: "npx", args: ["-p", "pkg", "bin"] }), null);
});

Deno.test("cgroup choice fails closed on shared cgroups", () => {
  const callerCgroup = "/user.slice/session-1.scope";
  assert.equal(pickLeaderCgroup({ choice: "auto", leaderCgroup: "/o/o-task-t-1", callerCgroup }).take, true);
  for (const leaderCgroup of ["/", callerCgroup, "/user.slice", "/o/plain"]) {
    assert.equal(pickLeaderCgroup({ choice: "auto", leaderCgroup, callerCgroup }).take, false, leaderCgroup);
  }
  assert.equal(pickLeaderCgroup({ choice: { path: "/" }, leaderCgroup: "/a", callerCgroup }).take, false);
  assert.equal(pickLeaderCgroup({ choice: { path: "/w" }, leaderCgroup: "/w/a", callerCgroup: "/w/b" }).take, false);
});

const mount = findCgroup2Mount();
const cgroupSkip = mount === null ? "no cgroup v2 hierarchy is mounted" : cgroupWritable(mount);
if (cgroupSkip) console.log(`census cgroup tests skipped: ${cgroupSkip}`);

Deno.test({
  name: "cgroup source: a setsid + double-forked child in a task's cgroup is a cgroup member; none and a foreign cgroup leave it out",
  ignore: cgroupSkip !== null,
  async fn() {
    const dir = mkdtempSync(join(tmpdir(), "census-deno-cgroup-"));
    const base = `/csd${process.pid}`;
    const task = `${base}/csd-task-t-1`;
    mkdirSync(join(mount!, base));
    mkdirSync(join(mount!, task));
    try {
      const pidFile = join(dir, "escapee.pid");
      const script = `echo $$ > ${join(mount!, task, "cgroup.procs")}; ( setsid sh -c 'echo $$ > ${pidFile}; exec sleep 333' & ); exec sleep 334`;
      const child = spawn("sh", ["-c", script], { detached: true, stdio: "ignore" });
      started.add(child.pid!);
      await waitFor(() => existsSync(pidFile) && readFileSync(pidFile, "utf8").endsWith("\n"));
      const escapee = Number(readFileSync(pidFile, "utf8"));
      started.add(escapee);
      // The pid is written before the exec, while the short-lived subshell may still run: wait for them to settle.
      await waitFor(async () => {
        const snap = await takeSnapshot();
        return snap.processes.find((p) => p.pid === escapee)?.argv.join(" ") === "sleep 333" && !snap.processes.some((p) => p.ppid === child.pid && p.state !== "Z");
      });
      const leader = { pid: child.pid!, startTime: readProcStat(child.pid!)!.startTime };
      const auto = await takeCensus(leader);
      assert.ok(auto.ok);
      assert.deepEqual(auto.census.members.map((m) => [m.process.pid, m.why]), [[escapee, "cgroup-member"]]);
      assert.equal(auto.census.sources.cgroup, task);
      const none = await takeCensus(leader, { cgroup: "none" });
      assert.ok(none.ok);
      assert.deepEqual(none.census.members, []);
      const foreign = await takeCensus(leader, { cgroup: { path: base }, callerPid: escapee });
      assert.ok(foreign.ok);
      assert.deepEqual(foreign.census.members, []);
      assert.match(foreign.census.sources.cgroupNote ?? "", /holds this process too/);
    } finally {
      await endStarted();
      const taskDir = join(mount!, task);
      writeFileSync(join(taskDir, "cgroup.kill"), "1");
      await waitFor(async () => !(await cgroupPopulated(taskDir)));
      await waitFor(() => {
        try {
          rmdirSync(taskDir);
          return true;
        } catch {
          return false;
        }
      });
      rmdirSync(join(mount!, base));
      rmSync(dir, { recursive: true, force: true });
    }
  },
});

const PREFIX = `lhd${process.pid}`;
const placementProbe = await new CgroupV2Placement({ prefix: PREFIX }).probe();
if (!placementProbe.ok) console.log(`launched-agent test skipped: ${placementProbe.reason}`);

Deno.test({
  name: "launched agent: its launch record survives a restart, an escapee in its cgroup keeps it up, retirement ends its cgroup",
  ignore: !placementProbe.ok,
  async fn() {
    const storage = mkdtempSync(join(tmpdir(), "census-deno-launch-"));
    const pidFile = join(storage, "escapee.pid");
    const open = () => Supervisor.open({ storage, mode: "daemon", placement: "cgroup-v2", prefix: PREFIX, log: () => {}, graceMs: 500 });
    let sup = await open();
    let id: string | null = null;
    try {
      const server = { name: "sleeper", command: "sleep", args: ["335"] };
      const { task } = await launchAgent(sup, {
        agent: "other",
        servers: [server],
        argv: ["sh", "-c", `sleep 335 & ( setsid sh -c 'echo $$ > ${pidFile}; exec sleep 336' & ) ; wait`],
      });
      id = task.id;
      await waitFor(() => existsSync(pidFile) && readFileSync(pidFile, "utf8").endsWith("\n"));
      const escapee = Number(readFileSync(pidFile, "utf8"));
      started.add(escapee);
      // Its pid was written before its exec and before its short-lived parents ended; wait until only it stands in the way.
      await waitFor(async () => (await mayRetireAgent(sup, task.id)).decision.blocking?.pid === escapee);
      await sup.drain("restart");
      sup = await open();
      assert.equal((await readLaunchRecordFile(storage, task.id)).ok, true);
      const kept = await mayRetireAgent(sup, task.id);
      assert.equal(kept.decision.blocking?.pid, escapee);
      assert.equal(kept.decision.blocking?.why, "cgroup-member");
      process.kill(escapee, "SIGKILL");
      await waitFor(() => {
        const stat = readProcStat(escapee);
        return stat === null || stat.state === "Z";
      });
      const retired = await retireIdleAgent(sup, task.id);
      assert.equal(retired.decision.verdict, "retire", JSON.stringify(retired.decision));
      assert.equal(retired.killed?.record.state, "killed");
      await waitFor(() => !existsSync(task.location.cgroupDir!));
    } finally {
      if (id && sup.get(id).state === "running") await sup.kill(id);
      await sup.close();
      await endStarted();
      rmSync(storage, { recursive: true, force: true });
    }
  },
});
