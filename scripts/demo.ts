#!/usr/bin/env node
/**
 * `npm start`: the restart demo. A daemon simulator runs a module (an
 * outlive supervisor in daemon mode) in a cgroup of its own; the module
 * starts four tasks; the daemon restarts the module the way the field's
 * daemon does (drain, then cgroup.kill on the module's cgroup); a new module
 * replays. Then the table of each task's fate: first with the best placement
 * found here, then, for contrast, with a plain process group.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { DaemonSimulator } from "../harness/daemon/simulator.ts";
import { isTerminal, type TaskRecord } from "../lib/mod.ts";
import { viewStorage } from "./cli/storage-view.ts";
import { formatTable } from "./cli/table.ts";

const { values } = parseArgs({
  args: process.argv.slice(2),
  options: {
    placement: { type: "string", default: "auto" },
    "no-contrast": { type: "boolean" },
    keep: { type: "boolean" },
    help: { type: "boolean", short: "h" },
  },
});
if (values.help) {
  console.log("usage: npm start [-- --placement auto|systemd-scope|cgroup-v2|process-group] [--no-contrast] [--keep]");
  process.exit(0);
}

const say = (line: string) => console.log(`[${new Date().toISOString().slice(11, 23)}] ${line}`);

const TASKS = [
  { id: "exits-7-later", shell: "echo compiling; sleep 3; echo failed; exit 7" },
  { id: "steady-output", shell: "for i in 1 2 3 4 5 6; do echo tick $i; sleep 0.5; done" },
  { id: "exit-trap", argv: ["bash", "-c", "trap 'echo cleanup ran' EXIT; echo serving; sleep 60"] },
  { id: "sleeper", argv: ["sleep", "60"] },
];

/** One restart scenario; returns the final records and the placement used. */
async function scenario(placement: string): Promise<{ placement: string; records: TaskRecord[] }> {
  const storage = mkdtempSync(join(tmpdir(), "outlive-demo-"));
  const prefix = "outlive-demo";
  const daemon = new DaemonSimulator({ storage, placement, prefix, livenessMs: 200 });
  try {
    say(daemon.cgroup ? `daemon: module cgroup ${daemon.cgroup.dir}` : "daemon: no writable cgroup v2 here; a restart SIGKILLs the module instead");
    let mod = await daemon.start();
    say(`module ${mod.pid} up; placement ${mod.ready.reason}`);
    for (const spec of TASKS) {
      const t = (await mod.request("run", { spec })).task;
      say(`task ${t.id} running as pid ${t.pid} in ${t.location.unit ?? t.location.cgroup ?? "?"}`);
    }
    await new Promise((r) => setTimeout(r, 700));
    say("daemon: restarting the module (drain 'restart', then cgroup.kill on its cgroup)");
    mod = await daemon.restart("restart");
    const r = mod.ready.replay;
    say(`module ${mod.pid} replayed: adopted [${r.adopted.join(", ")}], finished [${r.finished.map((f: { id: string; state: string }) => `${f.id}: ${f.state}`).join(", ")}]`);
    if (r.adopted.includes("exit-trap")) {
      await mod.request("kill", { id: "exit-trap", graceMs: 2000 });
      say("killed exit-trap through outlive (TERM first, so its EXIT trap runs)");
    }
    const deadline = Date.now() + 15_000;
    while (Date.now() < deadline) {
      const open = (await mod.request("list")).tasks.filter((t: TaskRecord) => t.id !== "sleeper" && !isTerminal(t.state));
      if (open.length === 0) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    say("daemon: stopping for good (drain 'disable' ends every task)");
    await daemon.stop("disable");
    const view = await viewStorage({ storage, prefix, mode: "daemon", log: () => {} });
    return { placement: view.records[0]?.placement ?? placement, records: view.records };
  } finally {
    await daemon.dispose();
    if (values.keep) say(`storage kept: ${storage}`);
    else rmSync(storage, { recursive: true, force: true });
  }
}

function table(result: { placement: string; records: TaskRecord[] }): string {
  return formatTable([
    ["TASK", "PLACEMENT", "FATE", "EXIT", "REASON"],
    ...result.records.map((t) => [t.id, t.placement, t.state, t.exitCode === null ? "-" : String(t.exitCode), t.reason ?? ""]),
  ]);
}

const best = await scenario(values.placement!);
const contrast = values["no-contrast"] || best.placement === "process-group" ? null : await scenario("process-group");
console.log(`\nWith the best placement found here (${best.placement}):\n${table(best)}`);
if (contrast) console.log(`\nFor contrast, the same restart with tasks in a plain process group inside the module's cgroup:\n${table(contrast)}`);
