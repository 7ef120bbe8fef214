import { resolve } from "node:path";
import { describeValue, OutliveError } from "../errors.ts";
import type { Placement } from "../placement/placement.ts";
import type { PruneRule } from "../retention/choose-prune.ts";
import { normalizeRetention } from "../retention/options.ts";
import { PLACEMENT_NAMES, type PlacementName, type TaskOrigin } from "../store/record/record.ts";
import { defaultShellPath, shellPathProblem } from "../spawn/shell-path.ts";
import { findShim, SHIM_ENV, shimChoice } from "../spawn/shim-path.ts";
import { defaultStorageRoot } from "../store/storage/storage-root.ts";
import { MIN_OUTPUT_BYTES } from "../output/trim-loop.ts";
import { outputBound, type RunSpec } from "../start/run-spec.ts";
import type { StepListener } from "../start/task-steps.ts";

export type { RunSpec };

export type SupervisorMode = "daemon" | "standalone";
export type PlacementChoice = "auto" | PlacementName;

export interface SupervisorOptions {
  /** Storage root. Default `$OUTLIVE_STORAGE`, else `$XDG_STATE_HOME/outlive`, else `~/.local/state/outlive`. */
  storage?: string;
  /**
   * `daemon`: something may kill this process's cgroup on a restart, so tasks
   * go into cgroups of their own. `standalone` (default): nothing does, and a
   * process group suffices.
   */
  mode?: SupervisorMode;
  /** Default `auto`: systemd-scope, else cgroup-v2, else process-group in daemon mode; process-group in standalone mode. */
  placement?: PlacementChoice;
  /** Prefix of unit and cgroup names (`<prefix>-task-<id>.scope` in `<prefix>.slice`). Default `outlive`. */
  prefix?: string;
  /** TERM-to-KILL grace of the kill ladder. Default 2000 ms. */
  graceMs?: number;
  /** How long `run` waits for a PTY task's terminal to be up before it returns anyway. Default 5000 ms. */
  ptyReadyMs?: number;
  /** Deadline of a task without a timeout. Default 86400 s (24 h). */
  ceilingSeconds?: number;
  /** How often an adopted task's pid is checked, for tasks that die without writing an exit marker. Default 1000 ms. */
  livenessIntervalMs?: number;
  /** Records replayed at once. Default 32. */
  replayConcurrency?: number;
  /** The most one record's replay may take. Default 5000 ms. */
  replayPerTaskMs?: number;
  /**
   * Bytes of output kept on disk per stream of each task; older output is
   * dropped by punching holes at the head of the file (see lib/output).
   * 0 keeps everything. Default 33554432 (32 MiB). A task's own `maxOutputBytes` wins.
   */
  maxOutputBytes?: number;
  /** Bytes of stdout and of stderr kept in a terminal record's tail. Default 2048. */
  tailBytes?: number;
  /** Directory for cgroup-v2 task cgroups. Default: see CgroupV2Options.baseDir. */
  cgroupBase?: string;
  /** Extra seconds a systemd scope's RuntimeMaxSec gets past the task's deadline. Default 60. */
  backstopSlackSeconds?: number;
  /** The shell that runs `shell` tasks, as an absolute path. Default: bash where installed (it runs EXIT traps on a signal), else `/bin/sh`. */
  shellPath?: string;
  /**
   * Bytes the storage keeps in `<root>/.ballast` and gives up when this
   * supervisor opens it on a full disk, so a restart still takes the storage
   * and stores what replay finds. Default 262144 (256 KiB) in daemon mode, 0
   * (none) in standalone mode, whose views open read-only on a full disk instead.
   */
  ballastBytes?: number;
  /**
   * Open only to look (default false): no lock is taken and nothing is
   * written; replay decides in memory and reports what it could not store
   * (`replayReport.unstored`). For views of a full or read-only storage.
   */
  readOnly?: boolean;
  /**
   * Where one-line notices go (placement choice, refusals, failed background
   * prunes). Default: nowhere; a library is quiet unless asked, e.g.
   * `log: (line) => console.error("outlive: " + line)`.
   */
  log?: (line: string) => void;
  /**
   * Marks every task this supervisor starts with `origin` in its record.
   * `"cli"`: this supervisor consumes no completions (the CLI opening the
   * storage for one command), so its tasks, once finished, may be pruned
   * without an ack. Default: none; the owner acknowledges.
   */
  origin?: TaskOrigin;
  /** Placement implementations to use instead of the built-in ones (tests, a daemon-owned cgroup). */
  placements?: Partial<Record<PlacementName, Placement>>;
  /**
   * What open prunes: finished, acknowledged tasks, oldest first (see `prune`).
   * Default `{ keep: 1000 }`: all but the newest 1000. `false`: nothing.
   */
  retention?: { olderThanSeconds?: number; keep?: number; unacknowledged?: boolean } | false;
  /**
   * Serve the control channel (`<storage>/control/supervisor.sock`, mode 0600 in a
   * 0700 directory) through which `outlive run/kill/wait/ack/rm/prune`, and other
   * `outlive serve` and `outlive mcp` processes, reach this supervisor while it
   * holds the storage. It speaks the wire protocol (lib/rpc). Default true.
   */
  control?: boolean;
  /** The longest request line the control channel takes, in bytes; longer ones are refused (-32600). Default 1048576 (1 MiB). */
  maxLineBytes?: number;
  /**
   * Hears each step of a task's start and end (TASK_STEPS) with the task's
   * id and `performance.now()`, for a breakdown of what a spawn costs. Called
   * synchronously on the supervisor's own path: keep it cheap, and it must
   * not throw. Default: none.
   */
  onStep?: StepListener;
  /**
   * Whether tasks are forked by a spawner that lives outside this process's
   * cgroup (lib/spawner): a transient service for systemd-scope, a cgroup of
   * its own for cgroup-v2, so a kill of this process's cgroup never cuts a
   * spawn short. Off, or with process-group, this process forks them itself.
   * Default true.
   */
  spawner?: boolean;
  /** How long a spawner with no supervisor connected and no spawn under way lives on. Default 60000 ms. */
  spawnerIdleMs?: number;
  /**
   * outlive-shim, the small native process each task runs under (it keeps
   * the exit code, the deadline, the output bound and a PTY task's terminal
   * while no supervisor runs): an absolute path, or `false` for the shell
   * wrapper it replaces. Default: `$OUTLIVE_SHIM` (a path, or `none` for the
   * shell wrapper), else the `@outlive/shim-linux-x64` package, else the
   * build beside the sources (`npm run build`); where none is found, the
   * shell wrapper, and `placementReason` says so. A path named here or in
   * `$OUTLIVE_SHIM` that cannot be run is an error, never passed over.
   */
  shimPath?: string | false;
  /**
   * How many of this supervisor's running tasks may each hold an inotify
   * instance, with which its shim hears its output grow (and otherwise
   * sleeps); the others look with a timer that backs off to 1.6 s while
   * they are quiet. A task allowed one takes it only after 1.5 s of quiet
   * output (before, it looks with the timer too), so a short task never
   * holds one. `fs.inotify.max_user_instances` is per user (128 on
   * many machines), and the user's own watchers (a dev server's) need
   * theirs. Default 32.
   */
  inotifyTasks?: number;
}

export type NormalizedOptions = Required<Omit<SupervisorOptions, "cgroupBase" | "placements" | "retention" | "origin" | "shimPath">> & {
  /** The shim tasks start under, or null for the shell wrapper, and why (see SupervisorOptions.shimPath). */
  shim: { path: string | null; why: string };
  origin: TaskOrigin | null;
  cgroupBase: string | undefined;
  retention: PruneRule | false;
  placements: Partial<Record<PlacementName, Placement>>;
};

/** Checks every option once, at the door, with an error naming the option, the value and its type. */
function normalizeOrigin(v: unknown, bad: (name: string, expected: string, value: unknown) => Error): TaskOrigin | null {
  if (v === undefined) return null;
  if (v !== "cli") throw bad("origin", 'absent or "cli"', v);
  return v;
}

/** Where tasks' shim is, or why they run under the shell wrapper; a shim named but unusable is refused. */
function normalizeShim(v: unknown, bad: (name: string, expected: string, value: unknown) => Error): { path: string | null; why: string } {
  if (v === false) return { path: null, why: "the shell wrapper, as the shimPath option asks" };
  if (v !== undefined && (typeof v !== "string" || v === "")) throw bad("shimPath", "an absolute path to outlive-shim, or false", v);
  const found = findShim({ shimPath: v as string | undefined });
  if (found.path !== null) return shimChoice(found);
  if (v !== undefined) throw bad("shimPath", `an absolute path to outlive-shim (${found.reason})`, v);
  if (process.env[SHIM_ENV] !== undefined && process.env[SHIM_ENV] !== "none") {
    throw new OutliveError("E_BAD_OPTION", `Expected ${SHIM_ENV} to name outlive-shim or be "none": ${found.reason}`);
  }
  return shimChoice(found);
}

/** The default `log`: says nothing. */
const quiet = (_line: string): void => {};
/** The default `onStep`: hears nothing. */
const deaf: StepListener = () => {};

export function normalizeOptions(o: SupervisorOptions = {}): NormalizedOptions {
  const bad = (name: string, expected: string, value: unknown) =>
    new OutliveError("E_BAD_OPTION", `Expected the \`${name}\` option to be ${expected}, got ${describeValue(value)}`);
  if (typeof o !== "object" || o === null) throw bad("options", "an object", o);
  const int = (name: keyof SupervisorOptions, dflt: number, min: number) => {
    const v = o[name] ?? dflt;
    if (!Number.isSafeInteger(v) || (v as number) < min) throw bad(name, `an integer >= ${min}`, v);
    return v as number;
  };
  const given = o.storage ?? defaultStorageRoot();
  if (typeof given !== "string" || given === "") throw bad("storage", "a directory path", given);
  // Absolute from here on: a task's files are named to its shim (or wrapper) and its spawner, which run in the
  // task's own cwd and in /, so a path relative to this process's cwd would name other files, or none.
  const storage = resolve(given);
  const mode = o.mode ?? "standalone";
  if (mode !== "daemon" && mode !== "standalone") throw bad("mode", '"daemon" or "standalone"', mode);
  const placement = o.placement ?? "auto";
  if (placement !== "auto" && !PLACEMENT_NAMES.includes(placement)) {
    throw bad("placement", `"auto" or one of ${PLACEMENT_NAMES.join(", ")}`, placement);
  }
  const prefix = o.prefix ?? "outlive";
  if (typeof prefix !== "string" || !/^[a-z][a-z0-9-]{0,30}$/.test(prefix)) {
    throw bad("prefix", "lowercase letters, digits and '-', starting with a letter, at most 31", prefix);
  }
  if (o.cgroupBase !== undefined && (typeof o.cgroupBase !== "string" || !o.cgroupBase.startsWith("/"))) {
    throw bad("cgroupBase", "an absolute path", o.cgroupBase);
  }
  const shellPath = o.shellPath ?? defaultShellPath();
  if (typeof shellPath !== "string") throw bad("shellPath", "an absolute path to an executable shell", shellPath);
  const shellProblem = shellPathProblem(shellPath);
  if (shellProblem) throw bad("shellPath", `an absolute path to an executable shell (${shellProblem})`, shellPath);
  if (o.readOnly !== undefined && typeof o.readOnly !== "boolean") throw bad("readOnly", "a boolean", o.readOnly);
  if (o.log !== undefined && typeof o.log !== "function") throw bad("log", "a function", o.log);
  if (o.control !== undefined && typeof o.control !== "boolean") throw bad("control", "a boolean", o.control);
  if (o.onStep !== undefined && typeof o.onStep !== "function") throw bad("onStep", "a function", o.onStep);
  if (o.spawner !== undefined && typeof o.spawner !== "boolean") throw bad("spawner", "a boolean", o.spawner);
  return {
    shim: normalizeShim(o.shimPath, bad),
    inotifyTasks: int("inotifyTasks", 32, 0),
    storage,
    mode,
    placement,
    prefix,
    graceMs: int("graceMs", 2000, 0),
    ptyReadyMs: int("ptyReadyMs", 5000, 0),
    ceilingSeconds: int("ceilingSeconds", 86400, 1),
    livenessIntervalMs: int("livenessIntervalMs", 1000, 10),
    replayConcurrency: int("replayConcurrency", 32, 1),
    replayPerTaskMs: int("replayPerTaskMs", 5000, 1),
    tailBytes: int("tailBytes", 2048, 0),
    maxOutputBytes: outputBound(o.maxOutputBytes, 32 * 1024 * 1024, (v) => bad("maxOutputBytes", `0 or an integer >= ${MIN_OUTPUT_BYTES}`, v)),
    backstopSlackSeconds: int("backstopSlackSeconds", 60, 0),
    ballastBytes: int("ballastBytes", mode === "daemon" ? 262_144 : 0, 0),
    cgroupBase: o.cgroupBase,
    shellPath,
    readOnly: o.readOnly ?? false,
    log: o.log ?? quiet,
    origin: normalizeOrigin(o.origin, bad),
    placements: o.placements ?? {},
    retention: normalizeRetention(o.retention),
    control: o.control ?? true,
    maxLineBytes: int("maxLineBytes", 1 << 20, 1024),
    onStep: o.onStep ?? deaf,
    spawner: o.spawner ?? true,
    spawnerIdleMs: int("spawnerIdleMs", 60_000, 0),
  };
}
