import { execFile } from "node:child_process";
import { censusError, describeThrown, type CensusError } from "../census-error.ts";
import type { CensusProcess, ProcessSnapshot } from "./process-list.ts";

/**
 * The columns the fallback asks `ps` for; `args` last, since it holds spaces.
 *
 * @example
 * ```ts
 * import { PS_ARGS } from "./ps-scan.ts";
 * console.log(["ps", ...PS_ARGS].join(" ")); // "ps -axww -o pid=,ppid=,pgid=,stat=,args="
 * ```
 */
export const PS_ARGS = ["-axww", "-o", "pid=,ppid=,pgid=,stat=,args="] as const;

const PS_LINE = /^\s*(\d+)\s+(\d+)\s+(\d+)\s+(\S+)(?:\s(.*))?$/;

/**
 * Parses the output of `ps -axww -o pid=,ppid=,pgid=,stat=,args=`. A line
 * that does not fit makes the result incomplete rather than being skipped,
 * because a skipped line might be the very process that should keep a
 * harness up.
 *
 * @example
 * ```ts
 * import { parsePsOutput } from "./ps-scan.ts";
 * const r = parsePsOutput("  7   1   7 Ss   node server.js\n");
 * console.log(r.processes[0].argv, r.problems.length); // ["node", "server.js"] 0
 * ```
 */
export function parsePsOutput(text: string): { processes: CensusProcess[]; problems: CensusError[] } {
  const processes: CensusProcess[] = [];
  const problems: CensusError[] = [];
  for (const line of text.split("\n")) {
    if (line.trim() === "") continue;
    const m = PS_LINE.exec(line);
    if (!m) {
      problems.push(censusError("snapshot-incomplete", `ps printed a line that cannot be read: ${JSON.stringify(line.slice(0, 120))}`));
      continue;
    }
    const args = (m[5] ?? "").trim();
    // ps cannot say where one argument ends and the next begins; splitting
    // on spaces is for display only (the snapshot says argv is not exact).
    const argv = args === "" ? [] : args.split(/ +/);
    processes.push({
      pid: Number(m[1]),
      ppid: Number(m[2]),
      pgid: Number(m[3]),
      sid: null,
      state: m[4][0],
      startTime: null,
      argv,
      name: argv[0] ?? "",
    });
  }
  return { processes, problems };
}

/** Runs `ps` and parses it; a failed or killed `ps` is an incomplete snapshot. */
export function scanPs(options: { command: string; timeoutMs: number }): Promise<ProcessSnapshot> {
  const takenAt = Date.now();
  return new Promise((resolve) => {
    execFile(
      options.command,
      [...PS_ARGS],
      { encoding: "utf8", maxBuffer: 256 * 1024 * 1024, timeout: options.timeoutMs, env: { ...process.env, LC_ALL: "C" } },
      (error, stdout) => {
        if (error) {
          const problem = censusError("snapshot-failed", `\`${options.command} ${PS_ARGS.join(" ")}\` failed: ${describeThrown(error)}`);
          resolve({ source: "ps", exactArgv: false, complete: false, problems: [problem], processes: [], takenAt });
          return;
        }
        const { processes, problems } = parsePsOutput(stdout);
        resolve({ source: "ps", exactArgv: false, complete: problems.length === 0, problems, processes, takenAt });
      },
    );
  });
}
