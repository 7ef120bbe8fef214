/**
 * host-reboot: the machine itself goes down under running tasks, with a
 * power cut (qemu's `system_reset`: no warning, no sync) within a second of
 * the writes under test. The storage is on the machine's own disk with a
 * 600 s commit interval and writeback held back as long, so only what
 * outlive flushed is there after the cut: each claim of the README's "What
 * each write protects" that a power cut can test is a check here.
 *
 * Tasks: `long` runs through the cut; `ends-before` ends a moment before it
 * (its end is written and delivered, not acknowledged); `acked` ended
 * earlier and is acknowledged a moment before the cut. After the reboot the
 * next module replays: `long` is lost with the reboot as its reason (boot id
 * changed), `ends-before` keeps its real end and is delivered again (it was
 * never acknowledged), `acked` stays acknowledged and is not delivered
 * again, `started-late` (run a moment before the cut, after every other
 * flush) is lost to the reboot rather than gone, nothing is quarantined, no
 * scope is left. Only on an engine that
 * can reboot its machine (`--engine vm`).
 */
import { existsSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { ScenarioContext } from "../inside/context.ts";
import { defineScenario, type Scenario } from "../inside/define-scenario.ts";
import { runIfMain } from "../inside/run-if-main.ts";
import { REBOOT_SENT_AFTER_PARAM } from "../shared/report.ts";

/** Bound on a module's start (Node's own start and the replay) just after a boot under software emulation, on two shared cores. */
export const READY_TIMEOUT_MS = 120_000;
/** Bound on each wait for a task under software emulation. */
const TASK_WAIT_MS = 60_000;

async function before(ctx: ScenarioContext): Promise<void> {
  const d = ctx.daemon({ autoAck: false, readyTimeoutMs: READY_TIMEOUT_MS });
  const mod = await d.start();
  ctx.fact("placementReason", mod.ready.reason);
  ctx.check("the module chose systemd-scope with the user manager", mod.ready.placement === "systemd-scope", mod.ready.reason);
  const go = join(ctx.runDir, "go");
  await d.run({ id: "long", shell: "echo serving; sleep 600" });
  await d.run({ id: "ends-before", argv: ["/bin/sh", "-c", 'echo started; while [ ! -e "$1" ]; do sleep 0.1; done; echo done; exit 5', "sh", go] });
  await d.run({ id: "acked", shell: "echo hello; exit 3" });
  const acked = await ctx.completion(d, "acked", TASK_WAIT_MS);
  ctx.check("acked exited 3 before the cut", acked.state === "exited" && acked.exitCode === 3, acked);
  await ctx.waitFor("long and ends-before to start their work", () => ctx.output("long") === "serving\n" && ctx.output("ends-before") === "started\n", TASK_WAIT_MS);

  // The baseline: everything so far on the disk, as on a host that has run a while.
  await ctx.$`sync -f ${ctx.storage}`;
  ctx.mark("sync", "storage synced: the tasks' records so far are on the disk");

  // The writes under test, each flushed by outlive itself or not at all: the ack, and the end of ends-before.
  const ack = await d.request("ack", { id: "acked" });
  ctx.check("the ack of acked was taken", ack.ok !== false, ack);
  writeFileSync(go, "");
  const ended = await ctx.completion(d, "ends-before", TASK_WAIT_MS);
  ctx.check("ends-before exited 5 before the cut, and that was delivered", ended.state === "exited" && ended.exitCode === 5, ended);
  // And a run after the last of those flushes: its first record is all that can answer for it after the cut.
  const late = await d.run({ id: "started-late", shell: "echo late; sleep 600" });
  ctx.check("started-late's run returned before the cut", late?.id === "started-late", late);
  ctx.fact("lastWriteUnderTestAt", new Date().toISOString());
  await ctx.reboot();
}

async function afterPowerCut(ctx: ScenarioContext): Promise<void> {
  // The guest's part (last write → request) by the guest's clock, the host's (request seen → reset sent) by the host's.
  const requested = ctx.marks.find((m) => m.kind === "reboot")?.at;
  const guestMs = requested ? Date.parse(requested) - Date.parse(String(ctx.facts.lastWriteUnderTestAt)) : NaN;
  const hostMs = Number(ctx.params[REBOOT_SENT_AFTER_PARAM]);
  ctx.fact("cutAfterLastWriteMs", { guest: guestMs, host: hostMs });
  ctx.check("the power cut came within a second of the last write under test", guestMs + hostMs < 1_000, { guestMs, hostMs });
  const d = ctx.daemon({ autoAck: false, readyTimeoutMs: READY_TIMEOUT_MS });
  const mod = await d.start();
  ctx.fact("replay", mod.ready.replay);
  const long = await ctx.record("long");
  ctx.check(
    "long is lost, and its reason is the reboot (boot id changed)",
    long?.state === "lost" && /host rebooted/.test(long.reason ?? "") && /boot id changed/.test(long.reason ?? ""),
    long && { state: long.state, reason: long.reason },
  );
  // Read from the disk, where a task the cut took is not there at all: that is the answer to check, not an error.
  const late = await ctx.record("started-late").catch(() => null);
  ctx.check(
    "started-late, whose run returned just before the cut, is not unknown: lost to the reboot (its first record was flushed)",
    late?.state === "lost" && /host rebooted/.test(late.reason ?? ""),
    late ? { state: late.state, reason: late.reason } : "no record",
  );
  const ends = await ctx.record("ends-before");
  ctx.check(
    "ends-before keeps the end it had before the cut (exited 5): its terminal record was flushed",
    ends?.state === "exited" && ends.exitCode === 5,
    ends && { state: ends.state, exitCode: ends.exitCode, reason: ends.reason },
  );
  ctx.check("ends-before's output tail, stored with its end, has its last line", (ends?.outputTail ?? "").includes("done"), ends?.outputTail);
  const acked = await ctx.record("acked");
  ctx.check(
    "acked stays acknowledged (exited 3): its ack was flushed",
    acked?.state === "exited" && acked.exitCode === 3 && acked.acknowledgedAt !== null,
    acked && { state: acked.state, acknowledgedAt: acked.acknowledgedAt },
  );
  // ends-before was delivered but never acknowledged: it comes again, once; acked does not.
  await ctx.completion(d, "ends-before", 20_000).catch(() => null);
  await ctx.sleep(1_000);
  const again = d.deliveries().map((m) => m.id);
  ctx.check("after the reboot ends-before is delivered again (it was not acknowledged), once", again.filter((id) => id === "ends-before").length === 1, again);
  ctx.check("after the reboot acked is not delivered again", !again.includes("acked"), again);
  const quarantine = join(ctx.storage, "quarantine");
  const quarantined = existsSync(quarantine) ? readdirSync(quarantine) : [];
  ctx.check("nothing is quarantined", quarantined.length === 0, quarantined);
  ctx.check("no task scope is left", (await ctx.units()).length === 0, await ctx.units());
  await d.stop("disable");
}

export function hostReboot(name: string, how: "power-cut" | "clean", after: (ctx: ScenarioContext) => Promise<void>, steps = before): Scenario {
  return defineScenario({
    name,
    summary: how === "power-cut"
      ? "a power cut under running tasks: the long one is lost to the reboot, flushed ends and acks stay"
      : "a clean reboot under a running task: its end is recorded, and the reason says the host's shutdown ended it",
    timeoutMs: 180_000,
    diskStorages: { main: "256m" },
    reboot: { how, after },
    inside: steps,
  });
}

const scenario = hostReboot("host-reboot", "power-cut", afterPowerCut);
export default scenario;
runIfMain(import.meta.url, scenario.name);
