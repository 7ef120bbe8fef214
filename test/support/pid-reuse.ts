import { type ChildProcess, spawn } from "node:child_process";
import { accessSync, constants, existsSync, writeFileSync } from "node:fs";

/** Why pid reuse cannot be forced here, or null when it can (root, writable ns_last_pid). */
export function pidReuseUnavailable(): string | null {
  try {
    accessSync("/proc/sys/kernel/ns_last_pid", constants.W_OK);
    return null;
  } catch {
    return "cannot write /proc/sys/kernel/ns_last_pid (needs root in the initial pid namespace)";
  }
}

/**
 * Starts an unrelated `sleep` that gets exactly `pid`, by setting the
 * kernel's last-allocated pid to pid-1 just before the fork. Waits (bounded)
 * for the old owner of the pid to be reaped first. Throws if another
 * process wins the race every time.
 */
export async function spawnWithPid(pid: number, attempts = 30): Promise<ChildProcess> {
  const freeBy = Date.now() + 20_000;
  while (existsSync(`/proc/${pid}`)) {
    if (Date.now() > freeBy) throw new Error(`pid ${pid} was never freed (its zombie was not reaped)`);
    await new Promise((r) => setTimeout(r, 50));
  }
  for (let i = 0; i < attempts; i++) {
    writeFileSync("/proc/sys/kernel/ns_last_pid", String(pid - 1));
    const child = spawn("sleep", ["120"], { detached: true, stdio: "ignore" });
    if (child.pid === pid) return child;
    child.kill("SIGKILL");
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`could not get pid ${pid} in ${attempts} attempts`);
}
