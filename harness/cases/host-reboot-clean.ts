/**
 * host-reboot-clean: the machine is rebooted cleanly (`systemctl reboot`)
 * under a running task. systemd stops the task's scope (SIGTERM) and syncs
 * the disks, so the task's end is recorded, and after the reboot its reason
 * says that the host's shutdown ended it: neither an invented `lost` nor a
 * plain "ended by SIGTERM". An acknowledged task stays acknowledged. Only on
 * an engine that can reboot its machine (`--engine vm`).
 */
import { statSync } from "node:fs";
import { readShimLine, taskPaths } from "../../lib/internal.ts";
import type { ScenarioContext } from "../inside/context.ts";
import { runIfMain } from "../inside/run-if-main.ts";
import { hostReboot, READY_TIMEOUT_MS } from "./host-reboot.ts";

function fileTimeMs(path: string): number | null {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return null;
  }
}

async function before(ctx: ScenarioContext): Promise<void> {
  const d = ctx.daemon({ autoAck: false, readyTimeoutMs: READY_TIMEOUT_MS });
  const mod = await d.start();
  ctx.check("the module chose systemd-scope with the user manager", mod.ready.placement === "systemd-scope", mod.ready.reason);
  await d.run({ id: "long", shell: "echo serving; sleep 600" });
  await d.run({ id: "acked", shell: "echo hello; exit 3" });
  await ctx.completion(d, "acked", 60_000);
  await d.request("ack", { id: "acked" });
  await ctx.waitFor("long to start its work", () => ctx.output("long") === "serving\n", 60_000);
  await ctx.reboot();
}

async function after(ctx: ScenarioContext): Promise<void> {
  const d = ctx.daemon({ autoAck: false, readyTimeoutMs: READY_TIMEOUT_MS });
  const mod = await d.start();
  ctx.fact("replay", mod.ready.replay);
  const long = await ctx.record("long");
  // How long long's shim waited, between its command's end and its code, for the answer whether the host was
  // stopping (its bound: the scope's stop timeout less a second); and its words if none came.
  const io = taskPaths(ctx.storage, "long");
  const [endedAt, codeAt] = [fileTimeMs(io.ended), fileTimeMs(io.exit)];
  ctx.fact("long's wait for the answer (ms)", endedAt !== null && codeAt !== null ? Math.round(codeAt - endedAt) : null);
  ctx.fact("long's unanswered question", readShimLine(io.hostUnanswered));
  ctx.check(
    "long's end was recorded: it ended by SIGTERM (exit code 143)",
    (long?.state === "exited" || long?.state === "killed") && long.exitCode === 143,
    long && { state: long.state, exitCode: long.exitCode, reason: long.reason },
  );
  ctx.check("long's reason says the host's shutdown ended it", /host's shutdown/.test(long?.reason ?? ""), long?.reason);
  const acked = await ctx.record("acked");
  ctx.check("acked stays acknowledged", acked?.acknowledgedAt !== null && acked?.exitCode === 3, acked && { state: acked.state, acknowledgedAt: acked.acknowledgedAt });
  await ctx.sleep(1_000);
  const again = d.deliveries().map((m) => m.id);
  ctx.check("acked is not delivered again", !again.includes("acked"), again);
  ctx.check("no task scope is left", (await ctx.units()).length === 0, await ctx.units());
  await d.stop("disable");
}

const scenario = hostReboot("host-reboot-clean", "clean", after, before);
export default scenario;
runIfMain(import.meta.url, scenario.name);
