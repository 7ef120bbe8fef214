import type { ParseArgsConfig } from "node:util";
import type { SupervisorOptions } from "../../lib/mod.ts";
import { UsageError } from "./usage-error.ts";

/** Flags every command that touches a storage understands. */
export const SUPERVISOR_FLAGS = {
  storage: { type: "string" },
  mode: { type: "string" },
  placement: { type: "string" },
  prefix: { type: "string" },
  json: { type: "boolean" },
  "lock-wait": { type: "string" },
  help: { type: "boolean", short: "h" },
} as const satisfies ParseArgsConfig["options"];

export const SUPERVISOR_FLAGS_HELP = `  --storage DIR      task storage (default $OUTLIVE_STORAGE, else $XDG_STATE_HOME/outlive, else ~/.local/state/outlive)
  --mode MODE        daemon | standalone (default $OUTLIVE_MODE, else standalone)
  --placement NAME   auto | systemd-scope | cgroup-v2 | process-group (default auto)
  --prefix NAME      unit and cgroup name prefix (default outlive)
  --lock-wait SECONDS  how long to wait for another command holding the storage (default 30)
  --json             print JSON`;

/**
 * Supervisor options from the common flags; the supervisor itself checks
 * their values. The CLI keeps the supervisor's notices to itself: `probe`
 * and `replay` say which placement is used, and stderr stays for errors.
 */
export function supervisorOptions(values: Record<string, unknown>): SupervisorOptions {
  return {
    storage: values.storage as string | undefined,
    mode: ((values.mode as string | undefined) ?? process.env.OUTLIVE_MODE) as SupervisorOptions["mode"],
    placement: values.placement as SupervisorOptions["placement"],
    prefix: values.prefix as string | undefined,
    log: () => {},
    // A command holds the storage for a moment; only a long-lived supervisor serves the channel.
    control: false,
    // …and consumes no completions: the tasks it starts are marked so that, once finished, they may be pruned without an ack.
    origin: "cli",
  };
}

/** `--lock-wait` in milliseconds (default 30 s). */
export function lockWaitMs(values: Record<string, unknown>): number {
  const text = values["lock-wait"] as string | undefined;
  if (text === undefined) return 30_000;
  const seconds = Number(text);
  if (text.trim() === "" || !Number.isFinite(seconds) || seconds < 0) {
    throw new UsageError(`--lock-wait takes a number of seconds >= 0, got ${JSON.stringify(text)}`);
  }
  return seconds * 1000;
}
