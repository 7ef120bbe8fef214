import { $ } from "zx";

/** What a host command did. `timedOut` means it was stopped at its bound, not that it failed. */
export interface CommandResult {
  exitCode: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
}

export interface CommandOptions {
  /** Every host command has a bound: nothing in the harness may hang. */
  timeoutMs: number;
  /** Written to stdin; without it stdin is /dev/null, so a command that reads stdin ends instead of waiting. */
  input?: string;
  env?: Record<string, string>;
}

/**
 * Runs an argv on the host (through zx, which quotes every word) and never
 * throws for a non-zero exit: callers decide what an exit code means.
 *
 * @example
 * ```ts
 * import { runCommand } from "./command.ts";
 * const r = await runCommand(["echo", "hi"], { timeoutMs: 5000 });
 * console.log(r.exitCode, r.stdout); // 0 "hi\n"
 * ```
 */
export async function runCommand(argv: string[], options: CommandOptions): Promise<CommandResult> {
  const started = Date.now();
  const shell = $({
    nothrow: true,
    quiet: true,
    verbose: false,
    timeout: `${options.timeoutMs}ms`,
    timeoutSignal: "SIGKILL",
    env: { ...process.env, ...(options.env ?? {}) },
    ...(options.input !== undefined ? { input: options.input } : { stdio: ["ignore", "pipe", "pipe"] }),
  });
  const out = await shell`${argv}`;
  // zx reports a timeout only through the signal; the clock tells it apart from a kill by someone else.
  const timedOut = out.signal === "SIGKILL" && Date.now() - started >= options.timeoutMs;
  return { exitCode: out.exitCode, signal: out.signal, stdout: out.stdout, stderr: out.stderr, timedOut };
}
