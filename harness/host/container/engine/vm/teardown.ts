import { existsSync, rmSync } from "node:fs";
import { waitUntil } from "../../../../../lib/kill/process-group.ts";
import { isSameProcess } from "../../../../../lib/proc/identity.ts";
import type { TeardownReport } from "../../machine.ts";
import { mountsUnder } from "../../host-checks/mounts.ts";
import { markStopped } from "../../state.ts";
import type { VmPaths } from "./qemu.ts";
import { qmpCommand } from "./qmp.ts";
import type { VmState } from "./vm-state.ts";

/** How long qemu gets to exit after QMP `quit` answered, before it is killed. */
const QUIT_GRACE_MS = 5_000;

/**
 * Ends the machine and removes what the run made on the host. QMP `quit`
 * ends qemu at once: nothing of the guest is worth an orderly shutdown, its
 * disk is the throw-away overlay, and what it wrote to the reports share
 * went straight to the host (9p without a cache). A qemu that does not go
 * is killed (it is signalled only while its pid and start time still match).
 * Then the overlay and the socket directory go; what remains is listed.
 */
export async function stopVm(state: VmState, timeoutMs: number): Promise<TeardownReport> {
  const started = Date.now();
  let stopped: TeardownReport["stopped"] = "gone";
  if (isSameProcess(state.qemu)) {
    const quit = await qmpCommand(state.paths.qmp, "quit", Math.min(QUIT_GRACE_MS, timeoutMs)).then(() => true, () => false);
    if (quit && (await waitUntil(() => !isSameProcess(state.qemu), Math.min(QUIT_GRACE_MS, timeoutMs), 20))) {
      stopped = "halted";
    } else {
      stopped = "killed";
      if (isSameProcess(state.qemu)) process.kill(state.qemu.pid, "SIGKILL");
      await waitUntil(() => !isSameProcess(state.qemu), 10_000, 20);
    }
  }
  const leftovers: string[] = [];
  if (isSameProcess(state.qemu)) leftovers.push(`qemu pid ${state.qemu.pid}`);
  leftovers.push(...removeRunFiles(state.paths));
  leftovers.push(...mountsUnder(state.runDir).map((m) => `mount ${m}`));
  const clean = leftovers.length === 0;
  if (clean) {
    rmSync(state.paths.qemuLog, { force: true });
    markStopped(state);
  }
  return { stopped, leftovers, clean, ms: Date.now() - started };
}

/** The overlay and the sockets: the run's only state on the host besides its logs. */
function removeRunFiles(paths: VmPaths): string[] {
  const left: string[] = [];
  for (const path of [paths.overlay, paths.sockets]) {
    rmSync(path, { recursive: true, force: true });
    if (existsSync(path)) left.push(path);
  }
  return left;
}
