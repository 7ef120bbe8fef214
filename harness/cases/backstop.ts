/**
 * backstop: the module stops for good (its cgroup killed, no module after
 * it) while a task with a 3 s timeout runs. Two things can end that task
 * with nobody supervising, and both are checked, separately and honestly:
 *
 * - `watchdog`: outlive's wrapper watchdog fires at the deadline (TERM to
 *   the group, grace, KILL) and marks the task timed out. This is what
 *   normally happens.
 * - `backstop`: the task first kills what keeps its deadline (outlive-shim,
 *   or the shell wrapper's watchdog: standing in for one that died), so
 *   only systemd is left: the scope's RuntimeMaxSec (deadline +
 *   backstopSlackSeconds, here 3 + 2 s) makes systemd stop the scope, with
 *   TERM first (TimeoutStopSec), so the task's TERM trap runs. With the
 *   shim gone nothing records the code: the end is told as the kill it was.
 */
import { existsSync } from "node:fs";
import { taskPaths } from "../../lib/mod.ts";
import { defineScenario } from "../inside/define-scenario.ts";
import { runIfMain } from "../inside/run-if-main.ts";

const SLACK_SECONDS = 2;
const TIMEOUT_SECONDS = 3;
const TRAPPED = "trap 'echo term trap ran; exit 3' TERM; echo up";
const LOOP = "while :; do sleep 0.1; done";
/**
 * Kills what keeps the deadline with KILL, so only systemd's backstop remains: outlive-shim itself (the
 * command's parent, which keeps the deadline and would record the code), or, under the shell wrapper, the
 * wrapper's warden (its other child).
 */
const KILL_WATCHDOG = 'if [ "$(cat /proc/$PPID/comm)" = outlive-shim ]; then echo shim; kill -KILL $PPID; ' +
  'else for p in $(pgrep -P $PPID); do [ "$p" = $$ ] || kill -KILL "$p"; done; fi; echo watchdog gone';

const scenario = defineScenario({
  name: "backstop",
  summary: "with the module gone for good, a 3 s-timeout task ends by the wrapper watchdog, or by systemd's RuntimeMaxSec when the watchdog is gone; the TERM trap runs either way",
  timeoutMs: 60_000,
  async inside(ctx) {
    const d = ctx.daemon({ backstopSlackSeconds: SLACK_SECONDS });
    await d.start();
    const wd = await d.run({ id: "watchdog", timeoutSeconds: TIMEOUT_SECONDS, argv: ["bash", "-c", `${TRAPPED}; ${LOOP}`] });
    const bs = await d.run({ id: "backstop", timeoutSeconds: TIMEOUT_SECONDS, argv: ["bash", "-c", `${TRAPPED}; ${KILL_WATCHDOG}; ${LOOP}`] });
    await ctx.waitFor("the backstop task to kill its watchdog", () => ctx.output("backstop").includes("watchdog gone"), 5_000);
    await d.killModule("the module stops for good");

    const ends: Record<string, number> = {};
    await ctx.waitFor("both scopes to end", async () => {
      const units = await ctx.units();
      for (const t of [wd, bs]) if (!units.includes(t.location.unit) && ends[t.id] === undefined) {
        ends[t.id] = Date.now() - Date.parse(t.startedAt);
        ctx.mark(t.id === "backstop" ? "systemd stop" : "watchdog", `${t.id} scope ended`);
      }
      return Object.keys(ends).length === 2;
    }, 20_000, 100);
    ctx.fact("scopeEndedAfterMs", ends);
    ctx.check(`the watchdog ended its task at the deadline (${TIMEOUT_SECONDS} s + grace)`, ends.watchdog >= TIMEOUT_SECONDS * 1000 - 300 && ends.watchdog < (TIMEOUT_SECONDS + 2.5) * 1000, ends.watchdog);
    ctx.check("the watchdog marked its task timed out", existsSync(taskPaths(ctx.storage, "watchdog").timedOut));
    ctx.check("the watchdog task's TERM trap ran", ctx.output("watchdog").includes("term trap ran"), ctx.output("watchdog"));
    const runtimeMax = (TIMEOUT_SECONDS + SLACK_SECONDS) * 1000;
    ctx.check(`systemd ended the watchdog-less scope at RuntimeMaxSec (${runtimeMax / 1000} s), not before`, ends.backstop >= runtimeMax - 300 && ends.backstop < runtimeMax + 3000, ends.backstop);
    ctx.check("the watchdog-less task was not marked timed out by a watchdog", !existsSync(taskPaths(ctx.storage, "backstop").timedOut));
    ctx.check("systemd stopped it with TERM first: its TERM trap ran", ctx.output("backstop").includes("term trap ran"), ctx.output("backstop"));

    const mod = await d.start();
    const finished: Array<{ id: string; state: string; exitCode: number | null; reason: string }> = mod.ready.replay.finished;
    const w = finished.find((f) => f.id === "watchdog");
    const b = finished.find((f) => f.id === "backstop");
    const underShim = ctx.output("backstop").includes("shim\n");
    ctx.fact("replayed", { watchdog: w, backstop: b, underShim });
    ctx.check("the next module reports the watchdog task timed_out", w?.state === "timed_out", w);
    if (underShim) {
      // The shim keeps the deadline and records the code: killed, nobody was left to write the trap's 3. The
      // end is told as what the evidence shows, a kill outlive did not send, never "fate unknown".
      ctx.check("the next module reports the task whose shim was KILLed as lost to a signal outlive did not send", b?.state === "lost" && /signal outlive did not send/.test(b.reason), b);
    } else {
      ctx.check("the next module reports the backstopped task's real exit (3, from its trap)", b?.state === "exited" && b.exitCode === 3, b);
    }
    await d.stop("disable");
  },
});
export default scenario;
runIfMain(import.meta.url, scenario.name);
