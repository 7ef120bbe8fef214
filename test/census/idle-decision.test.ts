import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { classifyMembers, mayRetireIdle, readLaunchRecord, takeSnapshot, underLeader, type LaunchInputs } from "../../lib/census/mod.ts";
import { readProcStat } from "../../lib/proc/stat.ts";
import { UNREAPED_CHILD } from "../../harness/scenario/unreaped-child.ts";
import { endStarted, SERVER_SCRIPT, startHarness, started, waitFor, type RunningHarness } from "./harness-process.ts";

let root: string;
let bin: string;
let cwd: string;
let env: NodeJS.ProcessEnv;

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "census-idle-"));
  bin = join(root, "bin");
  cwd = join(root, "project");
  mkdirSync(bin);
  mkdirSync(cwd);
  mkdirSync(join(root, "home"));
  copyFileSync(SERVER_SCRIPT, join(bin, "fake-mcp"));
  copyFileSync(SERVER_SCRIPT, join(bin, "server.mjs"));
  writeFileSync(join(bin, "reexec-mcp"), "#!/bin/sh\nexec sleep 300\n", { mode: 0o755 });
  env = { PATH: `${bin}:${process.env.PATH}`, HOME: join(root, "home") };
  execBit(join(bin, "fake-mcp"));
});

afterEach(async () => {
  await endStarted();
  rmSync(root, { recursive: true, force: true });
});

function execBit(path: string) {
  writeFileSync(path, readFileSync(path), { mode: 0o755 });
}

function writeMcpJson(servers: Record<string, { command: string; args?: string[] }>) {
  writeFileSync(join(cwd, ".mcp.json"), JSON.stringify({ mcpServers: servers }));
}

const launch = (): LaunchInputs => ({ agent: "claude-code", argv: ["claude"], cwd, env });

/** Starts the harness with one child per configured server, exactly as the config says, plus `extra`. */
async function startWithServers(servers: Record<string, { command: string; args?: string[] }>, extra: { argv: string[]; setsid?: boolean }[] = []) {
  const plans = Object.values(servers).map((s) => ({ argv: [s.command, ...(s.args ?? [])] }));
  return startHarness([...plans, ...extra], { env, cwd });
}

/** Waits until no child of the harness is still between execs (`/usr/bin/env node …`, `/bin/sh script`). */
async function settled(h: RunningHarness, more: () => boolean = () => true) {
  await waitFor(async () => {
    const snap = await takeSnapshot();
    const kids = snap.processes.filter((p) => p.ppid === h.pid);
    return kids.every((p) => !/(^|\/)(env|sh)$/.test(p.argv[0] ?? "") || p.argv[1] === "-c") && more();
  });
}

const leaderOf = (h: RunningHarness) => ({ pid: h.pid, startTime: h.startTime });

describe("mayRetireIdle with real MCP servers", () => {
  const servers = () => ({
    "by-path": { command: join(bin, "fake-mcp"), args: ["--stdio"] },
    "by-lookup": { command: "fake-mcp", args: ["--lookup"] },
    interpreted: { command: "node", args: [join(bin, "server.mjs"), "--interp"] },
    binary: { command: "/bin/sleep", args: ["304"] },
  });

  it("retires a harness whose only children are its servers (by path, by PATH lookup, through an interpreter)", async () => {
    writeMcpJson(servers());
    const record = await readLaunchRecord(launch());
    expect(record.servers.map((s) => s.name).sort()).toEqual(["binary", "by-lookup", "by-path", "interpreted"]);
    const h = await startWithServers(servers());
    await settled(h);
    const decision = await mayRetireIdle(leaderOf(h), record);
    expect(decision.verdict).toBe("retire");
    expect(decision.verdict === "retire" && decision.servers.map((s) => s.server).sort()).toEqual(["binary", "by-lookup", "by-path", "interpreted"]);
  });

  it("recognises a server found through a relative or slash-ended PATH entry, spelled as execvp spelled it", async () => {
    // The kernel gives a script's interpreter the path execvp built ("../bin/fake-mcp", "/x/bin//fake-mcp"), not a resolved one.
    const config = { looked: { command: "fake-mcp", args: ["--looked-up"] } };
    writeMcpJson(config);
    for (const entry of ["../bin", `${bin}/`]) {
      env = { ...env, PATH: `${entry}:${process.env.PATH}` };
      const record = await readLaunchRecord(launch());
      const h = await startWithServers(config);
      await settled(h);
      const argv = (await takeSnapshot()).processes.find((p) => p.pid === h.children[0])?.argv;
      expect(argv).toEqual(["node", `${entry}/fake-mcp`, "--looked-up"]);
      expect(await mayRetireIdle(leaderOf(h), record)).toMatchObject({ verdict: "retire", servers: [{ pid: h.children[0], server: "looked" }] });
    }
  });

  it("counts a server's own child as the server's", async () => {
    const config = { helper: { command: "fake-mcp", args: ["--with-child"] } };
    writeMcpJson(config);
    const record = await readLaunchRecord(launch());
    const h = await startWithServers(config);
    let grandchild = 0;
    await settled(h, () => {
      const stat = readProcStat(h.children[0]);
      return stat !== null;
    });
    await waitFor(async () => {
      const snap = await takeSnapshot();
      grandchild = snap.processes.find((p) => p.ppid === h.children[0] && p.argv[0] === "sleep")?.pid ?? 0;
      return grandchild !== 0;
    });
    const snap = await takeSnapshot();
    const census = underLeader(snap, leaderOf(h));
    expect(census.ok).toBe(true);
    if (!census.ok) return;
    const roles = Object.fromEntries(classifyMembers(census.census, record.servers).map((m) => [m.process.pid, m.role.kind]));
    expect(roles[grandchild]).toBe("servers-own");
    expect((await mayRetireIdle(leaderOf(h), record, { snapshot: snap })).verdict).toBe("retire");
  });

  it("keeps a harness up for a same-group worker, naming it", async () => {
    writeMcpJson(servers());
    const record = await readLaunchRecord(launch());
    const h = await startWithServers(servers(), [{ argv: ["sleep", "310"] }]);
    await settled(h);
    const decision = await mayRetireIdle(leaderOf(h), record);
    expect(decision).toMatchObject({ verdict: "keep", blocking: { pid: h.children[4], argv: ["sleep", "310"], why: "child-chain" } });
  });

  it("keeps a harness up for a setsid child", async () => {
    const record = await readLaunchRecord(launch());
    const h = await startHarness([{ argv: ["sleep", "311"], setsid: true }], { env, cwd });
    const decision = await mayRetireIdle(leaderOf(h), record);
    expect(decision).toMatchObject({ verdict: "keep", blocking: { pid: h.children[0] } });
  });

  it("keeps a harness up for a group member already reparented to init", async () => {
    const pidFile = join(root, "orphan.pid");
    const record = await readLaunchRecord(launch());
    const h = await startHarness([{ argv: ["sh", "-c", `sleep 312 & echo $! > ${pidFile}`] }], { env, cwd });
    await waitFor(() => readProcStat(h.children[0]) === null && readFileSync(pidFile, "utf8").endsWith("\n"));
    const orphan = Number(readFileSync(pidFile, "utf8"));
    started.add(orphan);
    const decision = await mayRetireIdle(leaderOf(h), record);
    expect(decision).toMatchObject({ verdict: "keep", blocking: { pid: orphan, why: "group-member" } });
  });

  it("keeps a harness up when a server re-execs under another name", async () => {
    const config = { renamed: { command: join(bin, "reexec-mcp") } };
    writeMcpJson(config);
    const record = await readLaunchRecord(launch());
    const h = await startWithServers(config);
    await waitFor(async () => (await takeSnapshot()).processes.find((p) => p.pid === h.children[0])?.argv[0] === "sleep");
    const decision = await mayRetireIdle(leaderOf(h), record);
    expect(decision).toMatchObject({ verdict: "keep", blocking: { pid: h.children[0], argv: ["sleep", "300"] } });
  });

  it("keeps a harness up when the server's argv runs below a shell, not as its direct child", async () => {
    const config = { s: { command: "fake-mcp", args: ["--nested"] } };
    writeMcpJson(config);
    const record = await readLaunchRecord(launch());
    const h = await startHarness([{ argv: ["sh", "-c", "fake-mcp --nested; true"] }], { env, cwd });
    await waitFor(async () => (await takeSnapshot()).processes.some((p) => p.ppid === h.children[0] && p.argv[0] === "node"));
    const decision = await mayRetireIdle(leaderOf(h), record);
    expect(decision).toMatchObject({ verdict: "keep", blocking: { pid: h.children[0] } });
  });

  it("goes by the launch record: editing a config afterwards changes nothing", async () => {
    const config = { s: { command: "fake-mcp", args: ["--stdio"] } };
    writeMcpJson(config);
    const record = await readLaunchRecord(launch());
    const h = await startWithServers(config, [{ argv: ["sleep", "313"] }]);
    await settled(h);
    // Removing the server and vouching for the worker after the launch must not matter.
    writeMcpJson({ worker: { command: "sleep", args: ["313"] } });
    const later = await readLaunchRecord(launch());
    expect(later.servers.map((s) => s.name)).toEqual(["worker"]);
    const decision = await mayRetireIdle(leaderOf(h), record);
    expect(decision).toMatchObject({ verdict: "keep", blocking: { pid: h.children[1] } });
    const snapshot = await takeSnapshot();
    const census = underLeader(snapshot, leaderOf(h));
    expect(census.ok && classifyMembers(census.census, record.servers).map((m) => m.role.kind)).toEqual(["server", "unclaimed"]);
  });

  it("gives no answer on an incomplete snapshot, though the same processes would retire", async () => {
    const config = { s: { command: "fake-mcp", args: ["--stdio"] } };
    writeMcpJson(config);
    const record = await readLaunchRecord(launch());
    const h = await startWithServers(config);
    await settled(h);
    const procRoot = join(root, "proc");
    for (const name of readdirSync("/proc").filter((n) => /^\d+$/.test(n))) {
      try {
        const stat = readFileSync(`/proc/${name}/stat`);
        const cmdline = readFileSync(`/proc/${name}/cmdline`);
        mkdirSync(join(procRoot, name), { recursive: true });
        writeFileSync(join(procRoot, name, "stat"), stat);
        writeFileSync(join(procRoot, name, "cmdline"), cmdline);
      } catch {
        // Ended meanwhile, like a process vanishing mid-scan.
      }
    }
    const callerPgid = readProcStat(process.pid)!.pgid;
    expect((await mayRetireIdle(leaderOf(h), record, { procRoot, callerPgid })).verdict).toBe("retire");
    mkdirSync(join(procRoot, "4999999", "stat"), { recursive: true });
    const decision = await mayRetireIdle(leaderOf(h), record, { procRoot, callerPgid });
    expect(decision).toMatchObject({ verdict: "keep", reason: { code: "snapshot-incomplete" } });
  });

  it("keeps a harness up when its launch record is unknown", async () => {
    const controller = new AbortController();
    controller.abort();
    const record = await readLaunchRecord(launch(), { signal: controller.signal });
    expect(record.known).toBe(false);
    const h = await startHarness([], { env, cwd });
    expect(await mayRetireIdle(leaderOf(h), record)).toMatchObject({ verdict: "keep", reason: { code: "launch-record-unknown" } });
  });
});

describe("mayRetireIdle for an adopted harness (no launch record)", () => {
  it("retires only when nothing at all runs under it; a zombie is nothing", async () => {
    const idle = await startHarness([], { shellPrefix: UNREAPED_CHILD });
    await waitFor(async () => (await takeSnapshot()).processes.some((p) => p.ppid === idle.pid && p.state === "Z"));
    expect((await mayRetireIdle(leaderOf(idle), null)).verdict).toBe("retire");

    writeMcpJson({ s: { command: "fake-mcp", args: ["--stdio"] } });
    const busy = await startHarness([{ argv: ["fake-mcp", "--stdio"] }], { env, cwd });
    expect(await mayRetireIdle(leaderOf(busy), null)).toMatchObject({ verdict: "keep", blocking: { pid: busy.children[0] } });
  });
});
