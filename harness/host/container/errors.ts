/**
 * Why a container could not be had. `cannot-run-here` codes mean the machine
 * lacks something (root, an engine, a package, network for debootstrap):
 * scenarios turn them into exit 77 ("skipped") rather than a failure.
 */
export type ContainerErrorCode =
  | "not-root"
  | "no-engine"
  | "missing-package"
  | "no-cgroup-v2"
  | "build-failed"
  | "boot-failed"
  | "not-running"
  | "exec-timeout"
  | "bad-option"
  | "unknown-container";

/** Codes that say "this machine cannot do it", not "the code under test is wrong". */
export const CANNOT_RUN_HERE: readonly ContainerErrorCode[] = [
  "not-root",
  "no-engine",
  "missing-package",
  "no-cgroup-v2",
  "build-failed",
  "boot-failed",
  "not-running",
];

/** The exit code scenarios and the CLI use for "cannot run here". */
export const EXIT_CANNOT_RUN_HERE = 77;

export class ContainerError extends Error {
  readonly code: ContainerErrorCode;
  /** Files kept for a person to read (journal, console log), when there are any. */
  readonly kept: string[];

  constructor(code: ContainerErrorCode, message: string, kept: string[] = []) {
    super(message);
    this.name = "ContainerError";
    this.code = code;
    this.kept = kept;
  }

  get cannotRunHere(): boolean {
    return CANNOT_RUN_HERE.includes(this.code);
  }
}

/**
 * One line for a person: what is missing and how to get it, plus where the
 * kept files are. Anything that is not a ContainerError is a bug and keeps
 * its stack.
 */
export function describeFailure(error: unknown): { line: string; exitCode: number } {
  if (error instanceof ContainerError) {
    const kept = error.kept.length > 0 ? ` (kept: ${error.kept.join(", ")})` : "";
    return {
      line: `container: ${error.message}${kept}`,
      exitCode: error.cannotRunHere ? EXIT_CANNOT_RUN_HERE : 1,
    };
  }
  const text = error instanceof Error ? (error.stack ?? error.message) : String(error);
  return { line: `container: unexpected error: ${text}`, exitCode: 1 };
}
