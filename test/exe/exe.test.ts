/**
 * The single executable (dist/exe/outlive, scripts/build-exe.ts) on a machine
 * with no Node: every run here is in a mount namespace of its own with
 * /dev/null bind-mounted over every Node binary (test/support/node-masked.ts),
 * so the executable, its spawner, its tasks and the clients that start it
 * cannot run Node, whatever PATH says. It is built first when it is missing
 * or older than the sources (and the time that took is said); where it
 * cannot be built (another platform, no Node 24 from npm, no shim) or Node
 * cannot be masked (not root), every test skips with the reason.
 */
import { spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, readlinkSync, rmdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, beforeAll, describe, expect, it, type TestContext } from "vitest";
import { buildRustClient, rustClientMissing } from "../../harness/host/rust-client.ts";
import { waitUntil } from "../../lib/kill/process-group.ts";
import { CgroupV2Placement } from "../../lib/placement/cgroup-v2/cgroup-v2.ts";
import { isSpawnerCommandLine, SPAWNER_MODE } from "../../lib/spawner/spawner-command-line.ts";
import { expectPromisesHeld, runDemo } from "../clients/demo-report.ts";
import { callTool, gone } from "../mcp/support/servers.ts";
import { tempDir } from "../support/cli.ts";
import { maskedArgv, maskingMissing, nodeBinaries } from "../support/node-masked.ts";
import { ServeChild } from "../support/serve-child.ts";
import { runToEnd } from "../support/run-to-end.ts";

const ROOT = join(import.meta.dirname, "..", "..");
const BUILT = join(ROOT, "dist", "exe", "outlive");
const VERSION = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string }).version;
const SCHEMA = join(ROOT, "lib", "rpc", "schema", "outlive-rpc.schema.json");
const PREFIX = `exe${process.pid}`;

const platform = process.platform === "linux" && process.arch === "x64" ? null : `the executable is built for linux-x64; this is ${process.platform}-${process.arch}`;
const cannotRun = platform ?? maskingMissing();
if (cannotRun) console.log(`test/exe: skipping: ${cannotRun}`);
/** Why the executable is not there to test (set by beforeAll when it cannot be built here). */
let notBuilt: string | null = null;

/** The newest change to what the executable is built from. */
function newestSource(): number {
  let newest = 0;
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, e.name);
      if (e.isDirectory()) walk(path);
      else if (e.name.endsWith(".ts") || e.name.endsWith(".json")) newest = Math.max(newest, statSync(path).mtimeMs);
    }
  };
  walk(join(ROOT, "lib"));
  walk(join(ROOT, "scripts"));
  for (const f of ["package.json", "package-lock.json", "shim/target/x86_64-unknown-linux-gnu/release/outlive-shim"]) {
    if (existsSync(join(ROOT, f))) newest = Math.max(newest, statSync(join(ROOT, f)).mtimeMs);
  }
  return newest;
}

/**
 * Builds dist/exe/outlive unless it is there and newer than its sources; sets notBuilt where it cannot be built.
 * Awaited: the build took minutes under load, past vitest's 60 s RPC bound (test/support/run-to-end.ts).
 */
async function ensureBuilt(): Promise<void> {
  if (existsSync(BUILT) && statSync(BUILT).mtimeMs >= newestSource()) {
    console.log(`test/exe: testing ${BUILT} as built (newer than its sources)`);
    return;
  }
  const started = Date.now();
  const shim = await runToEnd(process.execPath, [join(ROOT, "dist/scripts/build-shim.js")], { cwd: ROOT, timeoutMs: 600_000 });
  if (shim.status !== 0) throw new Error(`the shim's build failed: ${shim.stderr}`);
  const r = await runToEnd(process.execPath, [join(ROOT, "dist/scripts/build-exe.js")], { cwd: ROOT, timeoutMs: 600_000 });
  if (r.status === 3) {
    notBuilt = r.stderr.trim();
    console.log(`test/exe: skipping: ${notBuilt}`);
    return;
  }
  if (r.status !== 0) throw new Error(`npm run build:exe failed (exit ${r.status}): ${r.stdout}\n${r.stderr}`);
  console.log(`test/exe: built ${BUILT} in ${((Date.now() - started) / 1000).toFixed(1)} s: ${r.stdout.trim().split("\n").at(-1)}`);
}

/** Skips the test when the executable could not be built here. */
function ready(ctx: TestContext): void {
  if (notBuilt) ctx.skip();
}

interface Ran {
  code: number | null;
  out: string;
  err: string;
}

/** This environment without OUTLIVE_SHIM: the executable must find its own shim (beside it, or inside). */
const ENV: NodeJS.ProcessEnv = Object.fromEntries(Object.entries(process.env).filter(([k]) => k !== "OUTLIVE_SHIM"));

/** `exe ARGS…` with node masked out; waits for its end. */
function masked(exe: string, args: string[], env: NodeJS.ProcessEnv = ENV): Ran {
  const [program, ...rest] = maskedArgv([exe, ...args]);
  const r = spawnSync(program, rest, { encoding: "utf8", timeout: 60_000, env });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

/** cgroups this file's daemon-mode runs made (prefix PREFIX), removed deepest first once empty. */
function removeCgroups(mount: string): void {
  const remove = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) if (e.isDirectory()) remove(join(dir, e.name));
    try {
      rmdirSync(dir);
    } catch {
      // still populated: left for the spawner's next supervisor
    }
  };
  for (const e of readdirSync(mount, { withFileTypes: true })) if (e.isDirectory() && e.name.startsWith(PREFIX)) remove(join(mount, e.name));
}

describe.skipIf(cannotRun !== null)("the single executable, with node masked out of the machine", () => {
  let tmp: ReturnType<typeof tempDir>;
  beforeAll(async () => {
    tmp = tempDir("outlive-exe-");
    await ensureBuilt();
  }, 900_000);
  afterAll(() => tmp?.remove());

  it("cannot run node in the namespace, where the executable says its version, prints the schema and its help, obeying no NODE_* of the user's", (ctx) => {
    ready(ctx);
    expect(nodeBinaries().length).toBeGreaterThan(0);
    const node = masked("/bin/sh", ["-c", "node -e 0"]);
    expect(node.code, node.err).not.toBe(0);
    expect(masked(BUILT, ["--version"])).toEqual({ code: 0, out: `outlive ${VERSION}\n`, err: "" });
    const schema = masked(BUILT, ["schema"]);
    expect(schema.code, schema.err).toBe(0);
    expect(JSON.parse(schema.out)).toEqual(JSON.parse(readFileSync(SCHEMA, "utf8")));
    const help = masked(BUILT, ["--help"]);
    expect(help.out).toContain("usage: outlive COMMAND");
    expect(help.out).toMatch(/\n {2}schema {4}/);
    // The user's Node settings are theirs: the executable obeys none of them, and its tasks still get them.
    const settings = { ...ENV, NODE_OPTIONS: "--require /nonexistent", NODE_DEBUG: "net,child_process,module", NODE_PATH: "/nonexistent" };
    expect(masked(BUILT, ["--version"], settings)).toEqual({ code: 0, out: `outlive ${VERSION}\n`, err: "" });
    const storage = join(tmp.dir, "settings");
    const run = masked(BUILT, ["run", "--storage", storage, "--id", "env", "--", "sh", "-c", "env | grep -E '^(NODE_|OUTLIVE_EXE)' | sort"], settings);
    expect(run, run.err).toEqual({ code: 0, out: "env\n", err: "" });
    expect(masked(BUILT, ["wait", "--storage", storage, "env"], settings).err).toBe("");
    const seen = masked(BUILT, ["logs", "--storage", storage, "env"]).out.split("\n").filter((l) => /^NODE_(OPTIONS|DEBUG|PATH)=/.test(l));
    expect(seen).toEqual(["NODE_DEBUG=net,child_process,module", "NODE_OPTIONS=--require /nonexistent", "NODE_PATH=/nonexistent"]);
    const scenario = masked(BUILT, ["scenario", "list"]);
    expect(scenario.code).toBe(2);
    expect(scenario.err).toContain("outlive scenario: not in the single executable: scenarios run from the npm package");
  });

  it("runs a task and waits for it with its exit code; ps, logs and inspect read it; a PTY task has its terminal", (ctx) => {
    ready(ctx);
    const storage = join(tmp.dir, "standalone");
    const run = masked(BUILT, ["run", "--storage", storage, "--id", "first", "--", "sh", "-c", "echo out; exit 3"]);
    expect(run, run.err).toMatchObject({ code: 0, out: "first\n" });
    const waited = masked(BUILT, ["wait", "--storage", storage, "first", "--json"]);
    expect(waited.code, waited.err).toBe(3);
    expect(JSON.parse(waited.out)).toMatchObject({ id: "first", state: "exited", exitCode: 3 });
    const ps = masked(BUILT, ["ps", "-a", "--storage", storage]);
    expect(ps.out).toMatch(/first\s+exited\s+3/);
    expect(masked(BUILT, ["logs", "--storage", storage, "first"]).out).toBe("out\n");
    const pty = masked(BUILT, ["run", "--pty", "--storage", storage, "--id", "pty", "--", "sh", "-c", "tty; exit 5"]);
    expect(pty.code, pty.err).toBe(0);
    expect(masked(BUILT, ["wait", "--storage", storage, "pty"]).code).toBe(5);
    expect(masked(BUILT, ["logs", "--storage", storage, "pty"]).out).toMatch(/^\/dev\/pts\/\d+/);
  });

  it("a lone executable, nothing beside it, runs its tasks under the shim it carries, written once to the user's cache; the release archive's has it beside", (ctx) => {
    ready(ctx);
    const lone = join(tmp.dir, "lone");
    mkdirSync(lone);
    const exe = join(lone, "outlive");
    copyFileSync(BUILT, exe);
    const cache = join(tmp.dir, "cache");
    const env = { ...ENV, XDG_CACHE_HOME: cache };
    const probe = masked(exe, ["probe", "--json"], env);
    const shim = JSON.parse(probe.out).shim as { path: string; why: string };
    expect(shim.path).toMatch(new RegExp(`^${cache}/outlive/shim/[0-9a-f]{64}/outlive-shim$`));
    expect(shim.why).toContain("from the copy inside the executable");
    expect(existsSync(shim.path), "a probe writes nothing").toBe(false);
    const storage = join(tmp.dir, "lone-storage");
    // The task runs until the test has looked at it (a file, not a time: a busy machine may take seconds to look).
    const go = join(tmp.dir, "lone-go");
    const run = masked(exe, ["run", "--storage", storage, "--id", "shimmed", "--", "sh", "-c", `until [ -e ${go} ]; do sleep 0.05; done; exit 4`], env);
    expect(run.code, run.err).toBe(0);
    try {
      const record = JSON.parse(masked(exe, ["inspect", "--storage", storage, "shimmed", "--json"], env).out) as { pid: number };
      // The task's leader is the shim, run from the cache (the copy the executable wrote).
      expect(readlinkSync(`/proc/${record.pid}/exe`)).toBe(shim.path);
      expect(statSync(shim.path).mode & 0o777).toBe(0o755);
    } finally {
      writeFileSync(go, "");
    }
    expect(masked(exe, ["wait", "--storage", storage, "shimmed"], env).code).toBe(4);
    // The release archive holds the executable and the shim; unpacked, the shim beside it is taken.
    const archive = join(ROOT, "dist", "exe", "outlive-linux-x64.tar.gz");
    expect(spawnSync("tar", ["-tzf", archive], { encoding: "utf8" }).stdout.split("\n").filter(Boolean).sort()).toEqual(["outlive", "outlive-shim"]);
    const unpacked = join(tmp.dir, "unpacked");
    mkdirSync(unpacked);
    expect(spawnSync("tar", ["-xzf", archive, "-C", unpacked]).status).toBe(0);
    expect(JSON.parse(masked(join(unpacked, "outlive"), ["probe", "--json"], env).out).shim.why).toContain(`${join(unpacked, "outlive-shim")}, from beside the executable`);
  });

  it("daemon mode: the spawner is the executable in its spawner mode, recognised as such; NODE_OPTIONS reaches neither", async (ctx) => {
    ready(ctx);
    const placement = new CgroupV2Placement({ prefix: PREFIX });
    const probe = await placement.probe();
    if (!probe.ok) {
      console.log(`test/exe: daemon mode skipped: ${probe.reason}`);
      return ctx.skip();
    }
    const storage = join(tmp.dir, "daemon");
    const env = { ...ENV, NODE_OPTIONS: "--require /nonexistent", NODE_DEBUG: "net" };
    const server = new ServeChild(["--storage", storage, "--mode", "daemon", "--placement", "cgroup-v2", "--prefix", PREFIX], env, maskedArgv([BUILT]));
    let spawnerPid: number | null = null;
    try {
      expect(await server.initialize()).toMatchObject({ role: "holder" });
      const task = await server.request<{ id: string; placement: string }>("run", { shell: "echo $NODE_OPTIONS; exit 6" });
      expect(task.placement).toBe("cgroup-v2");
      expect(await server.request("wait", { id: task.id })).toMatchObject({ state: "exited", exitCode: 6 });
      const spawner = JSON.parse(readFileSync(join(storage, "spawner", "spawner.json"), "utf8")) as { pid: number; socket: string };
      spawnerPid = spawner.pid;
      const argv = readFileSync(`/proc/${spawner.pid}/cmdline`, "utf8").split("\0").slice(0, -1);
      expect(argv.slice(0, 2)).toEqual([BUILT, SPAWNER_MODE]);
      expect(readlinkSync(`/proc/${spawner.pid}/exe`)).toBe(BUILT);
      expect(isSpawnerCommandLine(argv, spawner.socket)).toBe(true);
      const environ = readFileSync(`/proc/${spawner.pid}/environ`, "utf8").split("\0");
      expect(environ.filter((v) => v.startsWith("NODE_"))).toEqual([]);
      expect(readFileSync(`/proc/${spawner.pid}/cgroup`, "utf8")).toMatch(new RegExp(`^0::/${PREFIX}-spawner-`, "m"));
      // The task's environment is the user's: NODE_OPTIONS is theirs to give their own Node programs.
      const out = await server.request<{ data: string }>("output", { id: task.id });
      expect(Buffer.from(out.data, "base64").toString()).toBe("--require /nonexistent\n");
    } finally {
      await server.close();
      if (spawnerPid !== null && !gone(spawnerPid)) process.kill(spawnerPid, "SIGKILL");
      if (spawnerPid !== null) await waitUntil(() => gone(spawnerPid!), 5000, 20);
      if (placement.mount) removeCgroups(placement.mount);
    }
    expect(server.stderr).not.toContain("/nonexistent");
    // NODE_DEBUG=net would have printed NET lines into serve's log.
    expect(server.stderr).not.toMatch(/^NET \d+/m);
  }, 60_000);

  it("serve --stdio: a second server serves through the first, and takes the storage over when the first is SIGKILLed", async (ctx) => {
    ready(ctx);
    const storage = join(tmp.dir, "takeover");
    const args = ["--stdio", "--storage", storage, "--mode", "standalone"];
    const first = new ServeChild(args, ENV, maskedArgv([BUILT]));
    let second: ServeChild | null = null;
    try {
      expect((await first.initialize()).role).toBe("holder");
      second = new ServeChild(args, ENV, maskedArgv([BUILT]));
      expect((await second.initialize()).role).toBe("client");
      await second.request("completions/subscribe", {});
      const task = await second.request<{ id: string }>("run", { shell: "sleep 1; exit 7" });
      await first.kill("SIGKILL");
      const done = await second.until(() => second!.notifications("completion").find((c) => c.id === task.id), 20_000);
      expect(done).toMatchObject({ state: "exited", exitCode: 7 });
      expect(second.stderr).toContain("taking the storage over");
      expect(readFileSync(join(storage, "supervisor.lock"), "utf8")).toContain(String(second.child.pid));
    } finally {
      if (first.child.exitCode === null && first.child.signalCode === null) await first.kill("SIGKILL");
      await second?.close();
    }
  }, 60_000);

  it("mcp: the SDK's client initializes and calls run_task and wait_task", async (ctx) => {
    ready(ctx);
    const storage = join(tmp.dir, "mcp");
    const [command, ...args] = maskedArgv([BUILT, "mcp", "--storage", storage, "--mode", "standalone"]);
    const transport = new StdioClientTransport({ command, args, stderr: "pipe" });
    const client = new Client({ name: "outlive-exe-test", version: "0" });
    await client.connect(transport);
    try {
      expect(client.getServerVersion()).toMatchObject({ name: "outlive", version: VERSION });
      const run = await callTool(client, "run_task", { shell: "echo from-mcp; exit 2" });
      expect(run.isError, run.text).toBe(false);
      const waited = await callTool(client, "wait_task", { id: run.data.task.id, timeoutSeconds: 30 });
      expect(waited.data.task).toMatchObject({ state: "exited", exitCode: 2 });
      expect((await callTool(client, "task_output", { id: run.data.task.id })).data.text).toBe("from-mcp\n");
    } finally {
      await client.close();
    }
  }, 60_000);

  it("the Python client's demo against the executable: completions once across a SIGKILL, the ack holds", async (ctx) => {
    ready(ctx);
    const python = spawnSync("python3", ["--version"]);
    if (python.status !== 0) return ctx.skip();
    const storage = join(tmp.dir, "python");
    const demo = join(ROOT, "examples", "clients", "python", "demo.py");
    const run = await runDemo(maskedArgv(["python3", "-s", "-E", "-B", demo, "--storage", storage, "--mode", "standalone", "--", BUILT]), ENV);
    expectPromisesHeld(run, storage);
  }, 120_000);
});

const rustMissing = cannotRun ?? rustClientMissing();
if (!cannotRun && rustMissing) console.log(`test/exe: the Rust client's demo skipped: ${rustMissing}`);

describe.skipIf(rustMissing !== null)("the Rust client against the single executable, node masked", () => {
  let tmp: ReturnType<typeof tempDir>;
  let demo = "";
  beforeAll(async () => {
    tmp = tempDir("outlive-exe-rust-");
    await ensureBuilt();
    if (!notBuilt) demo = (await buildRustClient(join(tmp.dir, "build"))).demo;
  }, 900_000);
  afterAll(() => tmp?.remove());

  it("completions once across a SIGKILL, the ack holds", async (ctx) => {
    ready(ctx);
    const storage = join(tmp.dir, "storage");
    const run = await runDemo(maskedArgv([demo, "--storage", storage, "--mode", "standalone", "--", BUILT]), ENV);
    expectPromisesHeld(run, storage);
  }, 120_000);
});
