import { spawn } from "node:child_process";

export interface Ended {
  /** The exit code, or null when a signal ended it (the bound's SIGKILL among them). */
  status: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** Why it could not be started, or that the bound ended it. */
  error?: Error;
}

/**
 * Runs a command to its end, as spawnSync would, without blocking the test's worker. vitest's worker answers its
 * runner over an RPC whose calls time out after 60 s, and a worker blocked longer (one spawnSync of a slow
 * command on a busy machine) fails the whole run with `Timeout calling "onTaskUpdate"` though every test passed.
 * `timeoutMs` bounds the run: the command is then SIGKILLed.
 */
export function runToEnd(command: string, args: string[], o: { cwd?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number } = {}): Promise<Ended> {
  return new Promise((done) => {
    const child = spawn(command, args, { cwd: o.cwd, env: o.env ?? process.env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    let error: Error | undefined;
    child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    const bound = o.timeoutMs === undefined ? null : setTimeout(() => {
      error = new Error(`${command} did not end within ${o.timeoutMs} ms`);
      child.kill("SIGKILL");
    }, o.timeoutMs);
    child.on("error", (e) => (error = e));
    child.on("close", (status, signal) => {
      if (bound) clearTimeout(bound);
      done({ status, signal, stdout, stderr, error });
    });
  });
}
