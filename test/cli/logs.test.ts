import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { Supervisor } from "../../lib/mod.ts";
import { waitFor } from "../support/wait.ts";

const CLI = join(__dirname, "..", "..", "dist", "scripts", "outlive.js");
const storage = mkdtempSync(join(tmpdir(), "outlive-logs-"));
const sup = await Supervisor.open({ storage, log: () => {} });
// Where a refused `run` is pointed (the CLI makes a storage before it checks the spec): removed with the file's own.
const refusedStorage = `${storage}-refused`;
afterAll(async () => {
  await sup.stopAll();
  await sup.close();
  rmSync(storage, { recursive: true, force: true });
  rmSync(refusedStorage, { recursive: true, force: true });
});

function outlive(...args: string[]) {
  const r = spawnSync(process.execPath, [CLI, args[0], "--storage", storage, ...args.slice(1)], { encoding: "utf8", timeout: 30_000 });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

/** The CLI as a separate process, as a user runs it; resolves with its exit and what it printed. */
function outliveAsync(...args: string[]) {
  const child = spawn(process.execPath, [CLI, args[0], "--storage", storage, ...args.slice(1)], { stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let err = "";
  child.stdout.on("data", (d) => (out += d));
  child.stderr.on("data", (d) => (err += d));
  // "close", not "exit": Node may emit exit before the pipes' last bytes are read.
  const done = new Promise<{ code: number | null; out: string; err: string }>((resolve) => child.on("close", (code) => resolve({ code, out, err })));
  return { child, done, out: () => out };
}

// Every command here runs while this test's supervisor holds the storage: `logs` only reads.
describe("outlive logs", () => {
  it("-f follows a running task to its end, then exits 0", async () => {
    const task = await sup.run({ shell: "for i in 1 2 3 4 5; do echo line $i; sleep 0.1; done" });
    const follower = outliveAsync("logs", task.id, "-f");
    const r = await follower.done;
    expect(r).toMatchObject({ code: 0, err: "" });
    expect(r.out).toBe("line 1\nline 2\nline 3\nline 4\nline 5\n");
    expect(sup.get(task.id).state).toBe("exited");
  });

  it("--both prefixes each line by its stream; --tail N starts at the last N lines", async () => {
    const go = join(storage, "go");
    const task = await sup.run({ shell: `seq 1 10; echo warn >&2; while [ ! -e ${go} ]; do sleep 0.02; done; echo more; echo late >&2` });
    const stderrFile = join(storage, "tasks", task.id, "io", "stderr");
    await waitFor("the task to write its first part", () => readFileSync(stderrFile, "utf8") === "warn\n");
    const follower = outliveAsync("logs", task.id, "--follow", "--both", "--tail", "2");
    await waitFor("the follower to print the tail", () => follower.out().includes("[stderr] warn\n"));
    writeFileSync(go, "");
    const both = await follower.done;
    expect(both.code).toBe(0);
    const lines = both.out.trimEnd().split("\n");
    expect(lines.filter((l) => l.startsWith("[stdout] "))).toEqual(["[stdout] 9", "[stdout] 10", "[stdout] more"]);
    expect(lines.filter((l) => l.startsWith("[stderr] "))).toEqual(["[stderr] warn", "[stderr] late"]);
    expect(lines).toHaveLength(5);
    expect(outlive("logs", task.id, "--tail", "3").out).toBe("9\n10\nmore\n");
    expect(outlive("logs", task.id, "--stderr").out).toBe("warn\nlate\n");
    expect(outlive("logs", task.id, "--tail", "0").out).toBe("");
    expect(outlive("logs", task.id, "--from", "21").out).toBe("more\n");
  });

  it("Ctrl-C ends a follow at once, with exit code 130", async () => {
    const task = await sup.run({ shell: "echo started; exec sleep 60" });
    const follower = outliveAsync("logs", task.id, "-f");
    await waitFor("the follower to print the first line", () => follower.out() === "started\n");
    const sent = Date.now();
    follower.child.kill("SIGINT");
    const r = await follower.done;
    expect(r.code).toBe(130);
    // "At once": well before the task would end (60 s); a generous bound for a loaded machine.
    expect(Date.now() - sent).toBeLessThan(10_000);
    expect(sup.get(task.id).state).toBe("running");
    await sup.kill(task.id, { graceMs: 100 });
  });

  it("shows whole lines of what the bound kept; run --max-output sets the bound", async () => {
    // The storage is held by this test's supervisor, so `run` goes through its control channel: the CLI
    // runs asynchronously, or this process could not answer it (a spawnSync here deadlocks).
    const run = await outliveAsync("run", "--id", "bounded", "--max-output", "8192", "--shell",
      "i=0; while [ $i -lt 3000 ]; do echo \"line $i\"; i=$((i+1)); done").done;
    expect(run.code, run.err).toBe(0);
    expect(sup.get("bounded").maxOutputBytes).toBe(8192);
    await sup.wait("bounded");
    const shown = outlive("logs", "bounded");
    expect(shown.code).toBe(0);
    const lines = shown.out.trimEnd().split("\n");
    expect(lines.at(-1)).toBe("line 2999");
    const first = Number(lines[0].split(" ")[1]);
    // Whole lines only, consecutive, and at least the bound's worth of them.
    expect(lines).toEqual(Array.from({ length: 3000 - first }, (_, i) => `line ${first + i}`));
    expect(shown.out.length).toBeGreaterThanOrEqual(8192 - 20);
    const dropped = Number(readFileSync(join(storage, "tasks", "bounded", "io", "stdout.dropped"), "utf8"));
    expect(dropped).toBeGreaterThan(0);
    // From offset 0, the dropped head is said on stderr, and the data starts right after it.
    const fromZero = outlive("logs", "bounded", "--from", "0");
    expect(fromZero.err).toBe(`outlive logs: ${dropped} bytes at offset 0 were dropped by the output bound\n`);
    expect(shown.out.endsWith(fromZero.out.slice(fromZero.out.indexOf("\n") + 1))).toBe(true);
    const json = outlive("logs", "bounded", "--json", "--from", String(dropped)).out.trimEnd().split("\n").map((l) => JSON.parse(l));
    expect(json[0]).toMatchObject({ stream: "stdout", offset: dropped, missed: 0 });
    expect(json.map((c) => c.text).join("")).toBe(fromZero.out);
  });

  it("refuses bad input with exit 2 and one line naming the flag", async () => {
    const task = await sup.run({ argv: ["true"] });
    const cases: Array<[string[], RegExp]> = [
      [["--from", "-1"], /--from/],
      [["--from", "1.5"], /--from takes a non-negative integer byte offset, got "1.5"/],
      [["--tail", "x"], /--tail takes a non-negative whole number of lines, got "x"/],
      [["--stderr", "--both"], /--stderr and --both/],
      [["--tail", "2", "--from", "3"], /--tail and --from/],
      [["--stream", "stdin"], /unknown flag --stream; this command takes --storage VALUE, --follow/],
    ];
    for (const [flags, message] of cases) {
      const r = outlive("logs", task.id, ...flags);
      expect(r.code, flags.join(" ")).toBe(2);
      expect(r.err.trim().split("\n")[0]).toMatch(message);
      expect(r.out).toBe("");
    }
    const bad = spawnSync(process.execPath, [CLI, "run", "--storage", refusedStorage, "--max-output", "100", "--", "true"], { encoding: "utf8" });
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/--max-output to be 0 or an integer >= 4096, got `100` \(number\)/);
    expect(outlive("logs", "no-such-task")).toMatchObject({ code: 1, err: expect.stringMatching(/No task "no-such-task"/) });
  });
});
