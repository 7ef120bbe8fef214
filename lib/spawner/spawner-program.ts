/**
 * The spawner's program (lib/spawner/spawner-server.ts), as either of its
 * command lines runs it (spawner-command-line.ts): `spawner-main.js` from the
 * npm package, or the single executable's spawner mode. Started by a
 * supervisor through its placement's spawner home, never by hand.
 *
 * Usage: --socket PATH --record PATH [--enter CGROUP_PROCS] [--idle-ms MS]
 */
import { parseArgs } from "node:util";
import { rmdirSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { serveSpawner } from "./spawner-server.ts";

/**
 * On its way out, the spawner moves to its cgroup's parent and removes its
 * own cgroup, so none is left behind; where the parent takes no processes
 * (controllers enabled below it), the empty cgroup stays for the next
 * supervisor to remove.
 */
function leaveOwnCgroup(enter: string): void {
  const own = dirname(enter);
  try {
    writeFileSync(`${dirname(own)}/cgroup.procs`, String(process.pid));
    rmdirSync(own);
  } catch {
    // Left for the next supervisor (SpawnerHome.stop).
  }
}

/** Serves as the spawner until it is told to exit or has been idle its time; then ends the process. */
export async function runSpawner(args: string[]): Promise<never> {
  const { values } = parseArgs({
    args,
    options: {
      socket: { type: "string" },
      record: { type: "string" },
      enter: { type: "string" },
      "idle-ms": { type: "string" },
    },
    strict: true,
  });
  const idleMs = Number(values["idle-ms"] ?? 60_000);
  if (!values.socket || !values.record || !Number.isInteger(idleMs) || idleMs < 0) {
    console.error("spawner: --socket PATH and --record PATH are required; --idle-ms must be a whole number of ms");
    process.exit(2);
  }
  const log = (line: string) => console.error(`${new Date().toISOString()} ${line}`);
  // The supervisor that started it may be gone: a hang-up or an interrupt meant for its terminal is not the spawner's end.
  process.on("SIGHUP", () => {});
  process.on("SIGINT", () => {});
  try {
    const { done } = await serveSpawner({ socket: values.socket, record: values.record, enter: values.enter ?? null, idleMs, log });
    await done;
    if (values.enter) leaveOwnCgroup(values.enter);
    process.exit(0);
  } catch (error) {
    log(`spawner ${process.pid}: ${(error as Error).message}`);
    process.exit(1);
  }
}
