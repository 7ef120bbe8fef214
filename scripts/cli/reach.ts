import { checkStoragePath } from "./storage-path.ts";
// Deep imports, not lib/mod.ts: every command that reaches the storage loads this, and start-up is paid per command.
import { askHolder, holderAnswers, NO_HOLDER } from "../../lib/control/socket-client.ts";
import type { MethodName } from "../../lib/rpc/protocol.ts";
import { OutliveError } from "../../lib/errors.ts";
import { defaultStorageRoot } from "../../lib/store/storage/storage-root.ts";
import type { SupervisorOptions } from "../../lib/supervisor/options.ts";
import { Supervisor } from "../../lib/supervisor/supervisor.ts";

/** How a command does its work: as the storage's supervisor for a moment, or through the one that holds it. */
export interface Reach<T> {
  direct: (sup: Supervisor) => Promise<T>;
  viaHolder: { op: MethodName; args: Record<string, unknown>; result: (answer: unknown) => T };
  /** Whether a missing storage is made (run); every other command refuses it and makes nothing. */
  creates?: boolean;
}

/**
 * Carries a command out on the storage. A long-lived supervisor that holds
 * it is asked through its control channel; with none, the command opens the
 * storage itself for a moment. Another command holding it for its own moment
 * is waited for (up to `lockWaitMs`), so commands started at once take turns
 * instead of failing with E_STORAGE_LOCKED.
 */
export async function reachStorage<T>(options: SupervisorOptions, reach: Reach<T>, lockWaitMs: number): Promise<T> {
  const root = checkStoragePath(options.storage ?? defaultStorageRoot(), { creates: reach.creates === true });
  const deadline = Date.now() + lockWaitMs;
  for (let pause = 5; ; pause = Math.min(pause * 2, 100)) {
    const answer = await askHolder(root, reach.viaHolder.op, reach.viaHolder.args).catch((error) => {
      // A holder closing between our connect and its answer: look again, as if none had answered.
      if ((error as OutliveError).code === "E_CLOSED") return NO_HOLDER;
      throw error;
    });
    if (answer !== NO_HOLDER) return reach.viaHolder.result(answer);
    let sup: Supervisor;
    try {
      sup = await Supervisor.open({ ...options, control: false });
    } catch (error) {
      if ((error as OutliveError).code !== "E_STORAGE_LOCKED") throw error;
      if (Date.now() >= deadline) {
        throw new OutliveError("E_STORAGE_LOCKED", `${(error as Error).message} (waited ${lockWaitMs / 1000} s; it serves no control channel)`);
      }
      await new Promise((r) => setTimeout(r, pause));
      continue;
    }
    try {
      return await reach.direct(sup);
    } finally {
      await sup.close();
    }
  }
}

/**
 * Opens the storage as its supervisor, waiting (up to `lockWaitMs`) while
 * another command holds it for its moment. A holder that serves the control
 * channel lives long: waiting for it would be in vain, so its E_STORAGE_LOCKED
 * is thrown at once, for the caller to read the disk or go through it.
 */
export async function openWaiting(options: SupervisorOptions, lockWaitMs = 30_000, { creates = false } = {}): Promise<Supervisor> {
  const root = checkStoragePath(options.storage ?? defaultStorageRoot(), { creates });
  const deadline = Date.now() + lockWaitMs;
  for (let pause = 5; ; pause = Math.min(pause * 2, 100)) {
    try {
      return await Supervisor.open({ ...options, control: false });
    } catch (error) {
      if ((error as OutliveError).code !== "E_STORAGE_LOCKED" || Date.now() >= deadline) throw error;
      if (await holderAnswers(root)) throw error;
      await new Promise((r) => setTimeout(r, pause));
    }
  }
}

/**
 * Opens a supervisor for the length of one command: it replays, `fn` runs,
 * it closes and the tasks run on. Only a command that `creates` (one that
 * starts a task) makes a missing storage.
 */
export async function withSupervisor<T>(options: SupervisorOptions, fn: (sup: Supervisor) => Promise<T>, { creates = false } = {}): Promise<T> {
  const sup = await openWaiting(options, 30_000, { creates });
  try {
    return await fn(sup);
  } finally {
    await sup.close();
  }
}
