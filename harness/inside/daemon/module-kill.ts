import { existsSync, readdirSync, readFileSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { waitUntil } from "../../../lib/kill/process-group.ts";
import { cgroupGone, cgroupPopulated, cgroupProcs, killCgroup } from "../../../lib/placement/cgroup-fs.ts";

/**
 * How the daemon ends everything in a module's cgroup: `cgroup.kill`
 * (Linux 5.14), or on an older kernel what daemons did before it: freeze
 * the cgroup (`cgroup.freeze`, Linux 5.2) so nothing in it can fork, then
 * SIGKILL each pid in it and its children, then thaw it (a frozen process
 * still dies of SIGKILL; the thaw lets the next module run in it).
 */
export type ModuleKillMethod = "cgroup.kill" | "freeze-and-kill";

/** `moduleKill` option: `auto` (default) picks by what the kernel offers in the cgroup. */
export type ModuleKillChoice = "auto" | ModuleKillMethod;

/** What a kill did, for the restart's mark. */
export interface ModuleKillResult {
  method: ModuleKillMethod;
  /** Pids sent SIGKILL one by one (freeze-and-kill only). */
  killed: number;
  /** The cgroup emptied within the bound. */
  empty: boolean;
}

/**
 * Pure: the method for a cgroup whose interface files are as given, or why
 * none can end it at once. `auto` prefers `cgroup.kill`; a method asked for
 * by name needs its file.
 *
 * @example
 * ```ts
 * import { chooseModuleKill } from "./module-kill.ts";
 * console.log(chooseModuleKill("auto", { kill: true, freeze: true })); // { method: "cgroup.kill" }
 * console.log(chooseModuleKill("auto", { kill: false, freeze: true })); // { method: "freeze-and-kill" }
 * console.log(chooseModuleKill("auto", { kill: false, freeze: false })); // { error: "…neither cgroup.kill (Linux 5.14) nor cgroup.freeze (Linux 5.2)…" }
 * ```
 */
export function chooseModuleKill(choice: ModuleKillChoice, files: { kill: boolean; freeze: boolean }): { method: ModuleKillMethod } | { error: string } {
  const wants = choice === "auto" ? (files.kill ? "cgroup.kill" : "freeze-and-kill") : choice;
  if (wants === "cgroup.kill" && !files.kill) return { error: "the module's cgroup has no cgroup.kill (the kernel is older than Linux 5.14)" };
  if (wants === "freeze-and-kill" && !files.freeze) {
    return { error: `the module's cgroup has ${files.kill ? "no cgroup.freeze" : "neither cgroup.kill (Linux 5.14) nor cgroup.freeze (Linux 5.2)"}: nothing can end it without racing its forks` };
  }
  return { method: wants };
}

/** Pure: `frozen 1` in the text of `cgroup.events`. */
export function eventsSayFrozen(events: string): boolean {
  return /^frozen 1$/m.test(events);
}

/** The cgroup and every cgroup below it. */
function subtree(dir: string): string[] {
  const out = [dir];
  try {
    for (const e of readdirSync(dir, { withFileTypes: true })) if (e.isDirectory()) out.push(...subtree(join(dir, e.name)));
  } catch {
    // Removed meanwhile: nothing below it.
  }
  return out;
}

/**
 * Ends everything in `dir` by `method` and waits until it is empty (at most
 * `timeoutMs`). A cgroup that is gone is empty.
 */
export async function killModuleCgroup(dir: string, choice: ModuleKillChoice = "auto", timeoutMs = 5000): Promise<ModuleKillResult> {
  if (!existsSync(dir)) return { method: choice === "auto" ? "cgroup.kill" : choice, killed: 0, empty: true };
  const chosen = chooseModuleKill(choice, { kill: existsSync(join(dir, "cgroup.kill")), freeze: existsSync(join(dir, "cgroup.freeze")) });
  if ("error" in chosen) throw new Error(`cannot kill the module cgroup ${dir}: ${chosen.error}`);
  if (chosen.method === "cgroup.kill") return { method: "cgroup.kill", killed: 0, empty: await killCgroup(dir, timeoutMs) };
  return freezeAndKill(dir, timeoutMs);
}

async function freezeAndKill(dir: string, timeoutMs: number): Promise<ModuleKillResult> {
  const write = (file: string, value: string) => writeFile(join(dir, file), value).catch((error) => {
    if (!cgroupGone(error)) throw error;
  });
  const events = () => {
    try {
      return readFileSync(join(dir, "cgroup.events"), "utf8");
    } catch {
      return "";
    }
  };
  let killed = 0;
  await write("cgroup.freeze", "1");
  try {
    // Frozen means no process in it runs, so none forks while the pids are read and killed.
    await waitUntil(async () => eventsSayFrozen(events()) || !(await cgroupPopulated(dir)), timeoutMs, 10);
    for (const cgroup of subtree(dir)) {
      for (const pid of cgroupProcs(cgroup)) {
        try {
          process.kill(pid, "SIGKILL");
          killed++;
        } catch {
          // Exited meanwhile.
        }
      }
    }
  } finally {
    await write("cgroup.freeze", "0");
  }
  const empty = await waitUntil(async () => !(await cgroupPopulated(dir)), timeoutMs, 10);
  return { method: "freeze-and-kill", killed, empty };
}
