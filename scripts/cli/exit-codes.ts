import { OutliveError } from "../../lib/errors.ts";
import { UsageError } from "./usage-error.ts";

/**
 * One exit code per kind of failure, the same for every command. The
 * commands whose codes mean something else on purpose (`wait`, `attach`,
 * `agent retire`) say so in their help and in the README's table.
 */
export const EXIT = {
  ok: 0,
  /** The command ran and failed: no such task, a live task, no storage, the storage locked or unreadable, a refused system call. */
  failed: 1,
  /** How the command was called: an unknown command or flag, a flag's value, a bad task id. */
  usage: 2,
  /** The program of an argv task is there but cannot be run: no execute permission, a directory (the shell's and `docker run`'s code). */
  notExecutable: 126,
  /** The program of an argv task is not on PATH (the code `docker run` and shells use). */
  notFound: 127,
} as const;

/** The error codes that are mistakes in how a command was called. */
const USAGE_CODES = new Set(["E_USAGE", "E_BAD_OPTION", "E_BAD_ID"]);
/** The error codes with an exit code of their own. */
const OWN_CODES: Record<string, number> = { E_NOT_FOUND: EXIT.notFound, E_NOT_EXECUTABLE: EXIT.notExecutable };

/** An error as a command reports it: a code to switch on, a message, the exit code. */
export interface ReportedError {
  code: string;
  message: string;
  exitCode: number;
}

/**
 * What a command's error means for its caller; null for an error outlive
 * did not throw on purpose (a bug: the caller lets it crash with its stack).
 *
 * @example
 * ```ts
 * import { OutliveError } from "../../lib/errors.ts";
 * import { reportedError } from "./exit-codes.ts";
 * console.log(reportedError(new OutliveError("E_NO_TASK", "No task \"x\""))); // { code: "E_NO_TASK", message: "No task \"x\"", exitCode: 1 }
 * ```
 */
export function reportedError(error: unknown): ReportedError | null {
  // Told by name as well as by class: the bundled CLI (scripts/bundle-cli.ts) runs `scenario` from the
  // unbundled modules, whose UsageError and OutliveError are classes of their own.
  if (error instanceof UsageError || isNamed(error, "UsageError")) return { code: "E_USAGE", message: (error as Error).message, exitCode: EXIT.usage };
  if (error instanceof OutliveError || (isNamed(error, "OutliveError") && typeof (error as { code?: unknown }).code === "string")) {
    const code = String((error as OutliveError).code);
    return { code, message: (error as Error).message, exitCode: OWN_CODES[code] ?? (USAGE_CODES.has(code) ? EXIT.usage : EXIT.failed) };
  }
  // A system call refused (EMFILE with too few descriptors, say): its errno, not a stack.
  const errno = (error as { code?: unknown })?.code;
  if (typeof errno === "string" && /^E[A-Z0-9]+$/.test(errno)) {
    const hint = errno === "EMFILE" || errno === "ENFILE" ? "; raise the open-file limit (ulimit -n)" : "";
    return { code: errno, message: `${(error as Error).message}${hint}`, exitCode: EXIT.failed };
  }
  return null;
}

function isNamed(error: unknown, name: string): error is Error {
  return error instanceof Error && error.name === name;
}

/** Whether the command's own arguments (not a task's, after `--`) ask for JSON. */
export function wantsJson(args: readonly string[]): boolean {
  const end = args.indexOf("--");
  return (end === -1 ? args : args.slice(0, end)).includes("--json");
}

/**
 * Prints an error the one way every command does: one line on stderr,
 * `WHERE: message [CODE]`, or with `--json` one JSON object
 * `{"error":{"code","message","exitCode"}}`. Returns the exit code; an error
 * not thrown on purpose is thrown on.
 */
export function reportError(where: string, error: unknown, json: boolean): number {
  const reported = reportedError(error);
  if (!reported) throw error;
  if (json) console.error(JSON.stringify({ error: reported }));
  else console.error(`${where}: ${reported.message}${reported.code === "E_USAGE" ? "" : ` [${reported.code}]`}`);
  return reported.exitCode;
}
