import { readdirSync, readFileSync } from "node:fs";
import { findHostCgroups } from "../../harness/host/container/host-checks/host-cgroup.ts";

/**
 * What a runner process with pid `runnerPid` may have left on the host: a
 * live systemd-nspawn of one of its machines (`outlive-<suite>-<pid>-…`),
 * or a launch cgroup of one. Empty when it cleaned up.
 */
export function leftoversOf(runnerPid: number): string[] {
  const machine = new RegExp(`outlive-(bookworm|trixie)-${runnerPid}-[a-z0-9]+`);
  const left: string[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const argv = readFileSync(`/proc/${name}/cmdline`, "utf8").split("\0");
      if (argv.some((a) => machine.test(a))) left.push(`process ${name}: ${argv.join(" ").slice(0, 120)}`);
    } catch {
      // gone
    }
  }
  const host = findHostCgroups();
  for (const root of [host.v2, host.v1Systemd].filter((d): d is string => Boolean(d))) {
    for (const entry of readdirSync(root)) {
      if (entry.startsWith("outlive-container-") && machine.test(entry)) left.push(`cgroup ${root}/${entry}`);
    }
  }
  return left;
}
