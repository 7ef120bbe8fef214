import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { projectRoot } from "../../harness/shared/project-root.ts";
import { pidNamespaceUnavailable } from "../support/pid-namespace.ts";

// runCommand's bound kills nsenter's group. Under a PID 1 that reaps nothing (vitest as PID 1 in `.ci/loaded`,
// npm in a CI job's container), a child nsenter had not reaped yet went to that PID 1 and stayed a zombie in the
// container's pid namespace; the container's PID 1 then could never finish exiting, and the nspawn teardown found
// it in state S (issue 36). Here a Node process is PID 1 of a pid namespace of its own, as there, and the
// "container" is a second namespace whose PID 1 is `sleep`.
const unavailable = pidNamespaceUnavailable();
if (unavailable) console.log(`command-timeout: skipped: ${unavailable}`);

const dir = mkdtempSync(join(tmpdir(), "outlive-command-timeout-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const ROUNDS = 20;

const script = `
import { spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { runCommand } from ${JSON.stringify(pathToFileURL(join(projectRoot(), "dist/harness/host/container/command.js")).href)};
const stat = (pid) => {
  try {
    const s = readFileSync("/proc/" + pid + "/stat", "utf8");
    const f = s.slice(s.lastIndexOf(")") + 2).split(" ");
    return { state: f[0], ppid: Number(f[1]), comm: s.slice(s.indexOf("(") + 1, s.lastIndexOf(")")) };
  } catch { return null; }
};
const until = async (what, ok) => {
  for (let i = 0; i < 200; i++) { if (ok()) return; await new Promise((r) => setTimeout(r, 25)); }
  throw new Error("never: " + what);
};
const outer = spawn("unshare", ["--pid", "--fork", "--mount-proc", "sleep", "1000"], { stdio: "ignore", detached: true });
let init = 0;
await until("the inner PID 1", () => (init = Number(readFileSync("/proc/" + outer.pid + "/task/" + outer.pid + "/children", "utf8").trim())) > 0);
const timedOut = [];
for (let i = 0; i < ${ROUNDS}; i++) {
  const r = await runCommand(["nsenter", "-t", String(init), "-p", "-m", "sleep", "30"], { timeoutMs: 150 });
  timedOut.push(r.timedOut);
}
const zombies = readdirSync("/proc").filter((e) => /^\\d+$/.test(e)).map(Number).filter((p) => { const s = stat(p); return s && s.ppid === 1 && s.comm === "sleep"; });
process.kill(init, "SIGKILL");
let initLeft = null;
try { await until("the inner PID 1 to end", () => { const s = stat(init); return s === null || s.state === "Z"; }); } catch { initLeft = stat(init); }
console.log(JSON.stringify({ timedOut, zombies, initLeft }));
process.exit(0);
`;

describe.skipIf(unavailable !== null)("runCommand's bound under a PID 1 that reaps nothing", () => {
  it(`leaves no child of nsenter behind as a zombie, so the entered namespace's PID 1 can end (${ROUNDS} timeouts)`, () => {
    const file = join(dir, "timeouts.mjs");
    writeFileSync(file, script);
    const r = spawnSync("unshare", ["--pid", "--fork", "--mount-proc", process.execPath, file], { encoding: "utf8", timeout: 60_000 });
    expect(r.status, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout.trim().split("\n").pop()!);
    expect(out.timedOut).toEqual(Array(ROUNDS).fill(true));
    expect(out.zombies, "sleeps left as zombies under the non-reaping PID 1").toEqual([]);
    expect(out.initLeft, "the entered namespace's PID 1 after SIGKILL").toBeNull();
  });
});
