import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { cgroupWritable, findCgroup2Mount } from "../../lib/placement/cgroup-fs.ts";
import { inspectPid } from "../../lib/proc/identity.ts";
import { waitFor } from "../support/wait.ts";

// A user's `kill -9 -PGID` on a task the standalone CLI started: the CLI is a separate process that exited
// long before, so the task "shared the dead supervisor's cgroup" — which proves nothing by itself.
const CLI = join(__dirname, "..", "..", "dist", "scripts", "outlive.js");
const storages: string[] = [];
const cgroups: string[] = [];
const pids: number[] = [];
afterAll(() => {
  for (const pid of pids) if (inspectPid(pid)) process.kill(pid, "SIGKILL");
  for (const dir of cgroups) {
    if (existsSync(dir)) {
      writeFileSync(join(dir, "cgroup.kill"), "1");
      spawnSync("sh", ["-c", `for i in $(seq 100); do rmdir '${dir}' 2>/dev/null && exit 0; sleep 0.05; done`]);
    }
  }
  for (const s of storages) rmSync(s, { recursive: true, force: true });
});

function storage(): string {
  const s = mkdtempSync(join(tmpdir(), "outlive-outside-kill-"));
  storages.push(s);
  return s;
}

/** Runs the CLI as a user would; with `cgroup`, from a shell that first moved itself there. */
function outlive(args: string[], cgroup?: string) {
  const r = cgroup
    ? spawnSync("sh", ["-c", 'echo $$ > "$1/cgroup.procs" && shift && exec "$@"', "sh", cgroup, process.execPath, CLI, ...args], { encoding: "utf8", timeout: 30_000 })
    : spawnSync(process.execPath, [CLI, ...args], { encoding: "utf8", timeout: 30_000 });
  if (r.status !== 0) throw new Error(`outlive ${args.join(" ")} exited ${r.status}: ${r.stderr}`);
  return r.stdout;
}

async function startAndKill9(root: string, cgroup?: string): Promise<{ reason: string; state: string; supervisorCgroup: string }> {
  const task = JSON.parse(outlive(["run", "--storage", root, "--json", "--", "sleep", "100"], cgroup));
  pids.push(task.pid);
  // The user's kill, from outside outlive: the whole group, SIGKILL.
  process.kill(-task.pid, "SIGKILL");
  await waitFor("the task's wrapper to be gone", () => inspectPid(task.pid) === null);
  const ps = JSON.parse(outlive(["ps", "--storage", root, "--json"]));
  const listed = ps.tasks.find((t: { id: string }) => t.id === task.id);
  const record = JSON.parse(readFileSync(join(root, "tasks", task.id, "record.json"), "utf8"));
  return { reason: listed.reason, state: listed.state, supervisorCgroup: record.supervisorCgroup };
}

const mount = findCgroup2Mount();
const noCgroups = mount === null ? "no cgroup v2 mount" : cgroupWritable(mount);
if (noCgroups) console.log(`skipping the tests in a cgroup of the test's own: ${noCgroups}`);

function makeCgroup(): string {
  const dir = join(mount!, `outlive-outside-kill-${process.pid}-${cgroups.length}`);
  mkdirSync(dir);
  cgroups.push(dir);
  return dir;
}

describe("a task killed from outside is never blamed on the supervisor's cgroup", () => {
  it("a user's kill -9 -PGID of a standalone CLI task: ended without an exit code, by a signal outlive did not send", async () => {
    const ended = await startAndKill9(storage());
    expect(ended.state).toBe("lost");
    expect(ended.reason).toContain("killed by a signal outlive did not send, such as SIGKILL");
    expect(ended.reason).not.toContain("killed with the supervisor's cgroup");
  });

  it.skipIf(noCgroups)("in a cgroup where a process older than the task still runs: that cgroup was not killed", async () => {
    const dir = makeCgroup();
    const older = spawn("sh", ["-c", 'echo $$ > "$1/cgroup.procs" && exec sleep 300', "sh", dir], { stdio: "ignore" });
    pids.push(older.pid!);
    await waitFor("the older process in the cgroup", () => readFileSync(join(dir, "cgroup.procs"), "utf8").includes(`${older.pid}\n`) && inspectPid(older.pid!)?.state !== undefined && readFileSync(`/proc/${older.pid}/cmdline`, "utf8").startsWith("sleep"));
    const ended = await startAndKill9(storage(), dir);
    expect(ended.supervisorCgroup).toBe(dir.slice(mount!.length));
    expect(ended.state).toBe("lost");
    expect(ended.reason).toContain("such as SIGKILL");
    expect(ended.reason).toContain(`that cgroup was not killed (pid ${older.pid}, older than the task, still runs there)`);
  });

  it.skipIf(noCgroups)("the supervisor's cgroup killed (cgroup.kill) and then removed: killed with the supervisor's cgroup", async () => {
    const root = storage();
    for (const removed of [false, true]) {
      const dir = makeCgroup();
      const task = JSON.parse(outlive(["run", "--storage", root, "--json", "--", "sleep", "100"], dir));
      pids.push(task.pid);
      writeFileSync(join(dir, "cgroup.kill"), "1");
      await waitFor("the task's wrapper to be gone", () => inspectPid(task.pid) === null);
      if (removed) await waitFor("the cgroup to be removed", () => { try { rmdirSync(dir); return true; } catch { return false; } });
      const ps = JSON.parse(outlive(["ps", "--storage", root, "--json"]));
      const listed = ps.tasks.find((t: { id: string }) => t.id === task.id);
      expect(listed.state).toBe("lost");
      expect(listed.reason).toContain("killed with the supervisor's cgroup when the supervisor restarted at");
      expect(listed.reason).toContain(removed ? "that cgroup is gone" : "nothing that ran in that cgroup before it survived");
    }
  });
});
