import type { Check, Verdict } from "./report.ts";

export interface Outcome {
  /** The scenario said it cannot run here (`ctx.skip`), with this reason. */
  skipReason: string | null;
  /** An exception that ended the steps, or a promise nobody handled. */
  error: string | null;
  checks: readonly Check[];
  /** The open bug the scenario declares, if any (`defineScenario({ bug })`). */
  bug?: string | null;
}

export interface Judgement {
  verdict: Verdict;
  /** One line: the skip reason, the error, the failed check, or why a reproduction failed. */
  why: string | null;
}

/**
 * The verdict, from what the steps did. Checks always state what SHOULD
 * happen. A scenario with no `bug` passes when every check holds. A
 * scenario with a `bug` is a reproduction: a failed check is the bug
 * showing (`reproduced`); every check holding means the bug no longer
 * shows, which fails it, so whoever fixed the bug is told to delete the
 * `bug` line and keep the scenario as a regression test. An error is never
 * a reproduction: the steps did not get to show anything.
 *
 * @example
 * ```ts
 * import { judge } from "outlive/harness";
 * const checks = [{ name: "the task survived", ok: false }];
 * console.log(judge({ skipReason: null, error: null, checks }).verdict);                   // "fail"
 * console.log(judge({ skipReason: null, error: null, checks, bug: "issue 12" }).verdict);  // "reproduced"
 * ```
 */
export function judge(o: Outcome): Judgement {
  if (o.skipReason !== null) return { verdict: "skip", why: o.skipReason };
  if (o.error !== null) return { verdict: "fail", why: o.error.split("\n")[0].replace(/^Error: /, "") };
  if (o.checks.length === 0) return { verdict: "fail", why: "no checks ran" };
  const failed = o.checks.find((c) => !c.ok);
  if (o.bug) {
    if (failed) return { verdict: "reproduced", why: `shown: ${failed.name} did not hold` };
    return { verdict: "fail", why: `the bug no longer shows (every check held): remove \`bug\` to keep this as a regression test` };
  }
  return failed ? { verdict: "fail", why: failed.name } : { verdict: "pass", why: null };
}
