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
 * for the old owner of the pid to be reaped first. Other tests fork beside
 * this one (a burst of 200 tasks forks several hundred processes), so a try
 * can lose the pid to them: it tries again, for up to `forMs`, with at least
 * `attempts` tries, and throws naming the pids it got if every try lost.
 */
export async function spawnWithPid(pid: number, attempts = 30, forMs = 20_000): Promise<ChildProcess> {
  const freeBy = Date.now() + 20_000;
  while (existsSync(`/proc/${pid}`)) {
    if (Date.now() > freeBy) throw new Error(`pid ${pid} was never freed (its zombie was not reaped)`);
    await new Promise((r) => setTimeout(r, 50));
  }
  const got: number[] = [];
  const until = Date.now() + forMs;
  for (let i = 0; i < attempts || Date.now() < until; i++) {
    writeFileSync("/proc/sys/kernel/ns_last_pid", String(pid - 1));
    const child = spawn("sleep", ["120"], { detached: true, stdio: "ignore" });
    if (child.pid === pid) return child;
    got.push(child.pid ?? 0);
    child.kill("SIGKILL");
    await new Promise((r) => setTimeout(r, 5 + Math.random() * 20));
  }
  throw new Error(`could not get pid ${pid} in ${got.length} attempts (${forMs} ms); got ${got.slice(-8).join(", ")}`);
}
