import type { ParseArgsConfig } from "node:util";
import type { SupervisorOptions } from "../../lib/mod.ts";
import { seconds } from "./flags.ts";

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
  --lock-wait DURATION  how long to wait for another command holding the storage: 90s, 2m, or seconds (default 30s)
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

/** `--lock-wait` in milliseconds (default 30 s); a duration such as `90s` or `2m`, or seconds. */
export function lockWaitMs(values: Record<string, unknown>): number {
  const text = values["lock-wait"] as string | undefined;
  return text === undefined ? 30_000 : seconds("--lock-wait", text) * 1000;
}
