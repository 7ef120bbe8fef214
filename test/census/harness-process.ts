import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { readProcStat } from "../../lib/proc/stat.ts";
import { takeSnapshot, underLeader } from "../../lib/census/mod.ts";
import { waitFor as waitForNamed } from "../support/wait.ts";

export const FIXTURES = fileURLToPath(new URL("./fixtures/", import.meta.url));
export const HARNESS_SCRIPT = `${FIXTURES}harness.mjs`;
export const SERVER_SCRIPT = `${FIXTURES}mcp-server.mjs`;

export interface ChildPlan {
  argv: string[];
  setsid?: boolean;
}

export interface RunningHarness {
  pid: number;
  startTime: string;
  children: number[];
  process: ChildProcess;
}

/** Every pid a test started, so each test can end exactly its own processes. */
export const started = new Set<number>();

/**
 * Starts the stand-in harness in a group of its own (as a daemon would),
 * with `env` and `cwd` as the harness's own, and waits for its children.
 * `shellPrefix` runs it through `sh -c '<prefix>; exec node harness.mjs'`.
 */
export async function startHarness(
  plans: ChildPlan[],
  options: { env?: NodeJS.ProcessEnv; cwd?: string; detached?: boolean; shellPrefix?: string } = {},
): Promise<RunningHarness> {
  const json = JSON.stringify(plans);
  // Under Deno, execPath is deno; only a direct spawn of it is turned into `deno run`.
  const node = "deno" in process.versions ? "node" : process.execPath;
  const [cmd, args] = options.shellPrefix
    ? ["sh", ["-c", `${options.shellPrefix}\nexec "$0" "$1" "$2"`, node, HARNESS_SCRIPT, json]]
    : [process.execPath, [HARNESS_SCRIPT, json]];
  const child = spawn(cmd as string, args as string[], {
    env: options.env ?? process.env,
    cwd: options.cwd,
    detached: options.detached ?? true,
    stdio: ["ignore", "pipe", "inherit"],
  });
  started.add(child.pid!);
  const line = await new Promise<string>((resolve, reject) => {
    let text = "";
    child.stdout!.on("data", (chunk) => {
      text += chunk;
      if (text.includes("\n")) resolve(text.split("\n")[0]);
    });
    child.on("error", reject);
    child.on("exit", (code) => reject(new Error(`harness exited early (${code})`)));
  });
  const { children } = JSON.parse(line) as { children: number[] };
  for (const pid of children) started.add(pid);
  const stat = readProcStat(child.pid!)!;
  return { pid: child.pid!, startTime: stat.startTime, children, process: child };
}

/** Polls until `check` is true (or throws after `ms`): test/support/wait.ts's `waitFor`, unnamed. */
export function waitFor(check: () => boolean | Promise<boolean>, ms = 10_000): Promise<void> {
  return waitForNamed("a census test's condition", check, ms, 25);
}

/** Live processes under `pid` (no identity check), for waiting and cleanup. */
export async function pidsUnder(pid: number): Promise<number[]> {
  const result = underLeader(await takeSnapshot(), { pid });
  return result.ok ? result.census.members.map((m) => m.process.pid) : [];
}

/**
 * Ends every process a test started and everything under them, by pid.
 * The census finds grandchildren and group members the test never saw.
 */
export async function endStarted(extra: number[] = []): Promise<void> {
  const pids = new Set<number>([...started, ...extra]);
  for (const pid of [...started]) for (const p of await pidsUnder(pid)) pids.add(p);
  for (const pid of pids) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // Already gone.
    }
  }
  started.clear();
  await waitFor(() => [...pids].every((pid) => { const s = readProcStat(pid); return s === null || s.state === "Z"; }));
}
