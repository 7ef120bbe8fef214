/**
 * An agent launched through outlive, on real processes in a real task
 * cgroup: its launch record survives a daemon restart, a setsid +
 * double-forked child keeps it up (found only through the cgroup), and its
 * retirement ends the whole cgroup.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { CgroupV2Placement, launchAgent, mayRetireAgent, readLaunchRecordFile, readProcStat, retireIdleAgent, Supervisor } from "../../lib/internal.ts";
import { HARNESS_SCRIPT, SERVER_SCRIPT } from "../census/harness-process.ts";
import { waitFor } from "../support/wait.ts";

const PREFIX = `lh${process.pid}`;
const probe = await new CgroupV2Placement({ prefix: PREFIX }).probe();
if (!probe.ok) console.log(`launch-agent: skipped: the cgroup-v2 placement does not work here: ${probe.reason}`);

const dirs: string[] = [];
const strays = new Set<number>();
/** Supervisors of the tests: whatever a failed test left running is ended through them, its cgroup included. */
const opened: (() => Supervisor)[] = [];
afterAll(async () => {
  for (const get of opened) {
    const endRunning = async (sup: Supervisor) => {
      for (const t of sup.list()) if (t.state === "running") await sup.kill(t.id);
    };
    // A test that failed half-way left its supervisor open; one that got to its end closed it.
    const ended = await endRunning(get()).then(() => true, () => false);
    await get().close().catch(() => {});
    if (ended) continue;
    // The options it was opened with; its normalized ones are not options the door takes again.
    const { storage, mode, placement, prefix, graceMs } = get().options;
    const again = await Supervisor.open({ storage, mode, placement, prefix, graceMs, log: () => {} });
    await endRunning(again);
    await again.close();
  }
  for (const pid of strays) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // Already gone, as it should be.
    }
  }
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const alive = (pid: number) => {
  const s = readProcStat(pid);
  return s !== null && s.state !== "Z";
};

describe.skipIf(!probe.ok)("an agent launched through outlive", () => {
  it("keeps its launch record through a daemon restart, is kept up by an escapee in its cgroup, and retires with its whole cgroup", async () => {
    const storage = mkdtempSync(join(tmpdir(), "outlive-launch-"));
    const project = mkdtempSync(join(tmpdir(), "outlive-launch-project-"));
    dirs.push(storage, project);
    writeFileSync(join(project, ".mcp.json"), JSON.stringify({ mcpServers: { notes: { command: process.execPath, args: [SERVER_SCRIPT] } } }));
    const escapeeFile = join(project, "escapee.pid");
    const plans = [
      { argv: [process.execPath, SERVER_SCRIPT] },
      // setsid, then a double fork: ppid 1, a session and group of its own.
      { argv: ["sh", "-c", `( setsid sh -c 'echo $$ > ${escapeeFile}; exec sleep 300' & ) ; exit 0`] },
    ];
    const open = () => Supervisor.open({ storage, mode: "daemon", placement: "cgroup-v2", prefix: PREFIX, log: () => {}, graceMs: 500 });
    let sup = await open();
    opened.push(() => sup);
    const { task, launchRecord } = await launchAgent(sup, {
      agent: "claude-code",
      argv: [process.execPath, HARNESS_SCRIPT, JSON.stringify(plans)],
      cwd: project,
      env: { HOME: project },
    });
    expect(launchRecord.known).toBe(true);
    expect(launchRecord.servers.map((s) => s.name)).toEqual(["notes"]);
    await waitFor("the escapee's pid", () => existsSync(escapeeFile) && readFileSync(escapeeFile, "utf8").endsWith("\n"));
    const escapee = Number(readFileSync(escapeeFile, "utf8"));
    strays.add(escapee);
    expect(readProcStat(escapee)!.ppid).not.toBe(task.pid);

    // The escapee wrote its pid before its exec and before its short-lived parents ended; wait until only it stands in the way.
    // Without the cgroup source nothing would: the agent would be retired, and this wait would time out.
    await waitFor("the escapee to be what keeps the agent", async () => (await mayRetireAgent(sup, task.id)).decision.blocking?.pid === escapee);
    const before = await mayRetireAgent(sup, task.id);
    expect(before.decision.verdict).toBe("keep");
    expect(before.decision.blocking).toMatchObject({ pid: escapee, why: "cgroup-member" });
    expect(before.cgroup).toBe(task.location.cgroup);

    // The daemon restarts: the next supervisor adopts the task and reads the same record back.
    await sup.drain("restart");
    sup = await open();
    try {
      expect(sup.get(task.id).state).toBe("running");
      const stored = await readLaunchRecordFile(storage, task.id);
      expect(stored.ok && stored.record).toEqual(launchRecord);
      const adopted = await mayRetireAgent(sup, task.id);
      expect(adopted.launchRecordFound).toBe(true);
      expect(adopted.decision.blocking?.pid).toBe(escapee);

      process.kill(escapee, "SIGKILL");
      await waitFor("the escapee to end", () => !alive(escapee));
      const cgroupDir = task.location.cgroupDir!;
      const members = readFileSync(join(cgroupDir, "cgroup.procs"), "utf8").split("\n").filter(Boolean).map(Number);
      for (const pid of members) strays.add(pid);
      const retired = await retireIdleAgent(sup, task.id);
      expect(retired.decision.verdict).toBe("retire");
      expect(retired.decision.verdict === "retire" ? retired.decision.servers.map((s) => s.server) : []).toEqual(["notes"]);
      expect(retired.killed?.record.state).toBe("killed");
      await waitFor("the task cgroup to be removed", () => !existsSync(cgroupDir));
      expect(members.filter(alive)).toEqual([]);
    } finally {
      await sup.close();
    }
  });

  it("a task with no launch record is judged as adopted without one: any MCP server keeps it up", async () => {
    const storage = mkdtempSync(join(tmpdir(), "outlive-launch-"));
    dirs.push(storage);
    const sup = await Supervisor.open({ storage, mode: "daemon", placement: "cgroup-v2", prefix: PREFIX, log: () => {}, graceMs: 500 });
    opened.push(() => sup);
    try {
      const task = await sup.run({ argv: [process.execPath, HARNESS_SCRIPT, JSON.stringify([{ argv: [process.execPath, SERVER_SCRIPT] }])] });
      await waitFor("the agent's server", async () => (await mayRetireAgent(sup, task.id)).decision.blocking !== undefined);
      const judged = await mayRetireAgent(sup, task.id);
      expect(judged.launchRecordFound).toBe(false);
      expect(judged.decision.blocking?.why).toBe("child-chain");
      await sup.kill(task.id);
    } finally {
      await sup.close();
    }
  });
});
