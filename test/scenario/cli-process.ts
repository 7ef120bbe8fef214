import { spawn } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** The CLI in its own process (not spawnSync: vitest's worker must keep answering while it runs). */
export function cli(args: string[], options: { cwd?: string; command?: string[]; env?: NodeJS.ProcessEnv } = {}): Promise<{ code: number | null; stdout: string; stderr: string; pid: number }> {
  const argv = options.command ?? [process.execPath, join(ROOT, "dist/scripts/outlive.js")];
  const child = spawn(argv[0], [...argv.slice(1), "scenario", "run", ...args], { cwd: options.cwd, env: options.env ?? process.env });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d) => (stdout += d));
  child.stderr.on("data", (d) => (stderr += d));
  const timer = setTimeout(() => child.kill("SIGTERM"), 240_000);
  return new Promise((resolve) => child.on("close", (code) => {
    clearTimeout(timer);
    resolve({ code, stdout, stderr, pid: child.pid! });
  }));
}
