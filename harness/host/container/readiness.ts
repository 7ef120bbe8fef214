import { ContainerError } from "./errors.ts";
import type { Machine } from "./machine.ts";
import type { Readiness } from "./state.ts";

export type { Readiness };


/** States after which waiting longer cannot help. */
const HOPELESS = new Set(["maintenance", "stopping"]);

/** Pure: the next step for an answer of `systemctl is-system-running`. */
export function classifySystemState(answer: string): "ready" | "wait" | "hopeless" {
  if (answer === "running" || answer === "degraded") return "ready";
  if (HOPELESS.has(answer)) return "hopeless";
  // initializing, starting, and the "offline"/empty answers of a manager whose bus is not up yet.
  return "wait";
}

/** "systemd 252 (252.39-1~deb12u2)" → 252. */
export function parseSystemdVersion(text: string): number | null {
  const m = /^systemd (\d+)/m.exec(text);
  return m ? Number(m[1]) : null;
}

/**
 * Polls (bounded) until the container's systemd says running or degraded
 * AND the lingering user's manager is active: scenarios need both, and the
 * user manager starts last.
 */
export async function waitUntilReady(machine: Machine, uid: number, timeoutMs: number, launchedAt = Date.now()): Promise<Readiness> {
  const started = launchedAt;
  const deadline = Date.now() + timeoutMs;
  const step = { timeoutMs: 5_000 };
  let last = "(no answer)";
  for (;;) {
    if (!(await machine.isAlive())) {
      throw new ContainerError("boot-failed", `container ${machine.name} stopped while booting (last state: ${last})`);
    }
    const system = await machine.enter(["systemctl", "is-system-running"], step);
    last = system.stdout.trim() || system.stderr.trim() || last;
    const verdict = classifySystemState(system.stdout.trim());
    if (verdict === "hopeless") {
      throw new ContainerError("not-running", `container ${machine.name} is ${last}, not running`);
    }
    if (verdict === "ready") {
      const user = await machine.enter(["systemctl", "is-active", `user@${uid}.service`], step);
      if (user.stdout.trim() === "active") {
        const state = system.stdout.trim() as Readiness["systemState"];
        const ms = Date.now() - started;
        const failed = state === "degraded" ? await failedUnits(machine) : [];
        const version = parseSystemdVersion((await machine.enter(["systemctl", "--version"], step)).stdout) ?? 0;
        return { systemState: state, failedUnits: failed, systemdVersion: version, ms };
      }
      last = `${last}, user@${uid}.service ${user.stdout.trim() || "not active"}`;
    }
    if (Date.now() >= deadline) {
      throw new ContainerError("not-running", `container ${machine.name} did not reach running within ${timeoutMs / 1000} s (last: ${last})`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function failedUnits(machine: Machine): Promise<string[]> {
  const r = await machine.enter(["systemctl", "--failed", "--plain", "--no-legend", "--no-pager"], { timeoutMs: 5_000 });
  return r.stdout.split("\n").map((line) => line.trim().split(/\s+/)[0] ?? "").filter(Boolean);
}
