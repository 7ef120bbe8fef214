/**
 * The spawner's command line: how it is started and how a process is known
 * for one (pure). It runs as one of two programs:
 *
 * - from the npm package or the sources, its own file run by the runtime:
 *   `node …/spawner-main.js --socket S …`, or `deno run --allow-all --quiet
 *   …/spawner-main.ts --socket S …`;
 * - from the single executable, the executable itself in a mode of its own:
 *   `outlive __spawner --socket S …` (there is no file to run beside it).
 */

/** The executable's first argument that makes it the spawner (scripts/exe/entry.ts). Not a command of the CLI. */
export const SPAWNER_MODE = "__spawner";

/** The spawner's program file, as the runtime is handed it. */
const SPAWNER_FILE = /(^|\/)spawner-main\.[jt]s$/;

export interface SpawnerFlags {
  socket: string;
  record: string;
  idleMs: number;
  /** The cgroup.procs file the spawner moves itself into, if any. */
  enter: string | null;
}

/**
 * The spawner's argv: `program` (the runtime and the spawner's file, or the
 * executable and SPAWNER_MODE) followed by its flags, `--socket` first.
 *
 * @example
 * ```ts
 * import { spawnerArgv } from "./spawner-command-line.ts";
 * console.log(spawnerArgv(["/opt/outlive", "__spawner"], { socket: "/s/spawner.sock", record: "/s/spawner.json", idleMs: 60000, enter: null }).join(" "));
 * // "/opt/outlive __spawner --socket /s/spawner.sock --record /s/spawner.json --idle-ms 60000"
 * ```
 */
export function spawnerArgv(program: readonly string[], f: SpawnerFlags): string[] {
  return [...program, "--socket", f.socket, "--record", f.record, "--idle-ms", String(f.idleMs), ...(f.enter ? ["--enter", f.enter] : [])];
}

/**
 * Whether a process's command line (its /proc/PID/cmdline, split) is a
 * spawner serving `socket`: `--socket socket` right after the spawner's file
 * (`spawner-main.js` or `.ts`, as any release started it) or right after the
 * executable's SPAWNER_MODE as its first argument. Anything else is not one,
 * whatever it names: an editor on spawner-main.ts, `sh -c "outlive __spawner"`,
 * a task whose arguments say `__spawner`, a spawner of another storage.
 *
 * @example
 * ```ts
 * import { isSpawnerCommandLine } from "./spawner-command-line.ts";
 * const socket = "/s/spawner.sock";
 * console.log(isSpawnerCommandLine(["node", "/p/dist/lib/spawner/spawner-main.js", "--socket", socket, "--record", "/s/r"], socket)); // true
 * console.log(isSpawnerCommandLine(["/opt/outlive", "__spawner", "--socket", socket, "--record", "/s/r"], socket)); // true
 * console.log(isSpawnerCommandLine(["/opt/outlive", "run", "--", "x", "__spawner", "--socket", socket], socket)); // false
 * console.log(isSpawnerCommandLine(["vim", "spawner-main.ts"], socket)); // false
 * ```
 */
export function isSpawnerCommandLine(argv: readonly string[], socket: string): boolean {
  const at = argv.indexOf("--socket");
  if (at < 1 || argv[at + 1] !== socket) return false;
  const before = argv[at - 1];
  return SPAWNER_FILE.test(before) || (at === 2 && before === SPAWNER_MODE);
}
