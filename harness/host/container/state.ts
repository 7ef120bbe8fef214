import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, rmdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { EngineName } from "./engine-names.ts";
import { ContainerError } from "./errors.ts";
import type { Suite } from "./options.ts";

/** How the container came up: `degraded` means some unit failed (listed), which scenarios may tolerate. */
export interface Readiness {
  systemState: "running" | "degraded";
  failedUnits: string[];
  /** e.g. 252 or 257. */
  systemdVersion: number;
  /** From launching the engine until the system and user@UID.service were both up. */
  ms: number;
}

/** What every engine records: enough for another process (`cli.ts exec|down NAME`) to find the container again. */
export interface CommonState {
  name: string;
  /** The Debian suite booted, or `host` for the host engine (the host's own systemd). */
  suite: Suite | "host";
  unified: boolean;
  user: string;
  uid: number;
  runDir: string;
  /** Where the project is for commands run through the machine: /work/project in a container, its own path on the host engine. */
  projectInside: string;
  startedAt: string;
  /** Set once systemd and the user manager ran. */
  readiness?: Readiness;
}

/** The fields every engine's state takes from the resolved options. */
export function commonState(options: Pick<CommonState, "name" | "suite" | "unified" | "user" | "uid" | "runDir">, projectInside = "/work/project"): Omit<CommonState, "startedAt" | "readiness"> {
  return {
    projectInside,
    name: options.name,
    suite: options.suite,
    unified: options.unified,
    user: options.user,
    uid: options.uid,
    runDir: options.runDir,
  };
}

/**
 * A container's state as saved: the common part, plus what its engine
 * keeps (each engine's file says what; `ENGINES[state.engine].attach`
 * reads it back).
 */
export interface ContainerState extends CommonState {
  engine: EngineName;
}

const STATE_FILE = "state.json";

/** Written atomically (temp file + rename): a reader never sees half a state. */
export function saveState(state: ContainerState): void {
  mkdirSync(state.runDir, { recursive: true });
  const temp = join(state.runDir, `.${STATE_FILE}.${process.pid}`);
  writeFileSync(temp, `${JSON.stringify(state, null, 2)}\n`);
  renameSync(temp, join(state.runDir, STATE_FILE));
}

export function runsDir(cacheDir: string): string {
  return join(cacheDir, "runs");
}

export function loadState(cacheDir: string, name: string): ContainerState {
  const file = join(runsDir(cacheDir), name, STATE_FILE);
  if (!existsSync(file)) throw new ContainerError("unknown-container", `no container named ${name} (no ${file})`);
  return JSON.parse(readFileSync(file, "utf8")) as ContainerState;
}

/** Names of containers with a state file; some may have stopped already. */
export function listStateNames(cacheDir: string): string[] {
  const dir = runsDir(cacheDir);
  if (!existsSync(dir)) return [];
  return readdirSync(dir).filter((name) => existsSync(join(dir, name, STATE_FILE)));
}

/**
 * After a clean teardown the run dir goes, unless it holds something a
 * person asked to keep (a journal): then only the state and console go.
 */
export function markStopped(state: ContainerState): void {
  for (const name of [STATE_FILE, "console.log"]) rmSync(join(state.runDir, name), { force: true });
  try {
    rmdirSync(state.runDir);
  } catch {
    // Not empty: a kept journal stays where the report said it is.
  }
}
