import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { bootContainer, cannotRunHereReason, ContainerError, describeFailure } from "../../harness/host/container/mod.ts";
import { findHostCgroups, launchCgroupDirs } from "../../harness/host/container/host-checks/host-cgroup.ts";
import { projectRoot as findProjectRoot } from "../../harness/shared/project-root.ts";

const missing = await cannotRunHereReason();
if (missing) console.log(`test/container: skipping fault tests that need root and nspawn: ${missing}`);

/** Rejects with a ContainerError that means "cannot run here" (exit 77), and returns it. */
async function cannotRunHere(promise: Promise<unknown>): Promise<ContainerError> {
  const error = await promise.then(() => null, (e: unknown) => e);
  expect(error).toBeInstanceOf(ContainerError);
  expect(describeFailure(error).exitCode).toBe(77);
  return error as ContainerError;
}

describe("faults end in one line and exit 77, never a hang", () => {
  it("an engine that is not there", async () => {
    // A client name no machine has, so the test means the same with or without podman installed.
    const ociCommand = `podman-not-installed-${process.pid}`;
    const error = await cannotRunHere(bootContainer({ engine: "podman", ociCommand }, () => {}));
    expect(error.code).toBe("no-engine");
    expect(error.message).toContain(`${ociCommand} is not installed or not on PATH`);
    expect(describeFailure(error).line.split("\n")).toHaveLength(1);
  });

  it.skipIf(missing !== null)("no root: the CLI (under Deno) says so and exits 77", () => {
    const root = findProjectRoot();
    const denoDir = mkdtempSync(join(tmpdir(), "outlive-deno-nobody-"));
    chmodSync(denoDir, 0o777);
    const r = spawnSync(
      "setpriv",
      ["--reuid=65534", "--regid=65534", "--clear-groups", join(root, "node_modules/.bin/deno"), "run", "-A", "harness/host/container/cli.ts", "up"],
      { cwd: root, encoding: "utf8", timeout: 60_000, env: { ...process.env, HOME: "/tmp", DENO_DIR: denoDir } },
    );
    rmSync(denoDir, { recursive: true, force: true });
    expect(r.status).toBe(77);
    expect(r.stderr).toMatch(/^container: needs root/m);
  });

  it.skipIf(missing !== null)("a debootstrap that fails keeps its log and leaves no half-built cache entry", async () => {
    const cacheDir = mkdtempSync(join(tmpdir(), "outlive-cache-"));
    try {
      // Port 9 (discard) refuses at once: debootstrap fails fast and the test does not touch the network.
      const error = await cannotRunHere(bootContainer({ engine: "nspawn", cacheDir, mirror: "http://127.0.0.1:9/debian" }, () => {}));
      expect(error.code).toBe("build-failed");
      expect(error.kept.length).toBeGreaterThan(0);
      expect(existsSync(error.kept[0]!)).toBe(true);
      expect(readdirSync(cacheDir).filter((n) => !n.startsWith("failed-"))).toEqual([]);
    } finally {
      rmSync(cacheDir, { recursive: true, force: true });
    }
  });

  it.skipIf(missing !== null)("a container that does not get to running in time keeps its evidence and leaves nothing running", async () => {
    const name = `outlive-fault-${process.pid}`;
    const error = await cannotRunHere(bootContainer({ engine: "nspawn", name, bootTimeoutMs: 1 }, () => {}));
    expect(["boot-failed", "not-running"]).toContain(error.code);
    expect(error.kept.some((path) => path.endsWith("console.log"))).toBe(true);
    expect(error.kept.filter((k) => k.startsWith("leftovers"))).toEqual([]);
    for (const dir of launchCgroupDirs(findHostCgroups(), name)) expect(existsSync(dir)).toBe(false);
    // The evidence was kept as it should be; this fault was made on purpose, so it goes.
    rmSync(dirname(error.kept.find((path) => path.endsWith("console.log"))!), { recursive: true, force: true });
  }, 120_000);
});
