import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runToEnd } from "./run-to-end.ts";

/** The built CLI, run as a user runs it: its own node process, the default shell's environment. */
export const CLI = join(__dirname, "..", "..", "dist", "scripts", "outlive.js");

export interface CliResult {
  code: number | null;
  out: string;
  err: string;
}

/** Runs `outlive ARGS…` in a separate process and returns its exit code and output. */
export function outliveCli(args: string[], env: NodeJS.ProcessEnv = process.env): CliResult {
  // `--` as the installed command's `#!/usr/bin/env -S node --` has it: Node 20 would take a task's `--env-file` as its own.
  const r = spawnSync(process.execPath, ["--", CLI, ...args], { encoding: "utf8", timeout: 60_000, env });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

/**
 * outliveCli without blocking the test's worker: for a test that runs the CLI many times over, whose calls
 * together may block it past vitest's 60 s RPC bound on a busy machine (see run-to-end.ts).
 */
export async function outliveCliAwaited(args: string[], env: NodeJS.ProcessEnv = process.env): Promise<CliResult> {
  const r = await runToEnd(process.execPath, ["--", CLI, ...args], { timeoutMs: 60_000, env });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

/** A temp directory for one test file, and its removal. */
export function tempDir(prefix: string): { dir: string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * `outlive COMMAND --storage STORAGE ARGS…` in a process of its own, as a shell would run it (the
 * storage named before any `--`), without blocking this process: a supervisor this test runs in
 * process may have to answer the CLI through its control channel meanwhile.
 */
export function outliveIn(storage: string, command: string, ...args: string[]): Promise<CliResult> {
  return outliveCliAwaited([command, "--storage", storage, ...args]);
}
