import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { bootContainer, type Suite } from "../../harness/host/container/mod.ts";
import { cgroupHierarchies, LIBPOD_PARENT } from "../../harness/host/container/engine/oci/oci-cgroups.ts";
import { engineEnv } from "../../harness/host/container/engine/oci/oci-engine.ts";
import { projectRoot as findProjectRoot } from "../../harness/shared/project-root.ts";
import { engineMissing } from "../../harness/host/container/host-checks/preflight.ts";
import { runCommand } from "../../harness/host/container/command.ts";

const root = findProjectRoot();
const SYSTEMD: Record<Extract<Suite, "bookworm" | "trixie">, number> = { bookworm: 252, trixie: 257 };

const podmanMissing = await engineMissing("podman");
if (podmanMissing) console.log(`test/container: skipping podman tests: ${podmanMissing}`);
const nspawnMissing = await engineMissing("nspawn");
if (nspawnMissing) console.log(`test/container: skipping the host engine tests (they run inside an nspawn container): ${nspawnMissing}`);

async function podman(...argv: string[]) {
  return runCommand(["podman", ...argv], { timeoutMs: 30_000, env: engineEnv("podman", root) });
}

describe.skipIf(podmanMissing !== null)("podman, offline, from the debootstrapped rootfs", () => {
  it.each(["bookworm", "trixie"] as const)("boots %s with systemd and the user manager, and leaves no container, cgroup or extra image", async (suite) => {
    const c = await bootContainer({ suite, engine: "podman" }, () => {});
    let id = "";
    try {
      expect(c.info.engine).toBe("podman");
      expect(c.info.readiness.systemdVersion).toBe(SYSTEMD[suite]);
      id = (c.machine as unknown as { state: { containerId: string } }).state.containerId;
      expect((await c.exec(["cat", "/proc/1/comm"])).stdout.trim()).toBe("systemd");
      const scope = await c.shell("systemd-run --user --scope --unit=engines-1 -p RuntimeMaxSec=10 cat /proc/self/cgroup", { user: true, timeoutMs: 20_000 });
      expect(scope.stdout).toMatch(/user@1000\.service\/.*engines-1\.scope/);
      // Node is the host's, bound read-only: the image carries none of its own.
      expect((await c.exec(["node", "-e", "console.log(process.version)"], { user: true })).stdout.trim()).toBe(process.version);
    } finally {
      const down = await c.teardown();
      expect(down.leftovers).toEqual([]);
    }
    expect((await podman("ps", "--all", "--quiet", "--filter", `name=^${c.info.name}$`)).stdout.trim()).toBe("");
    for (const h of cgroupHierarchies()) expect(existsSync(join(h, LIBPOD_PARENT, `libpod-${id}`))).toBe(false);
    const images = (await podman("images", "--format", "{{.Repository}}:{{.Tag}}")).stdout.split("\n").filter((n) => n.includes(`outlive-`) && n.includes(`:${suite}-`));
    expect(images).toHaveLength(1);
    expect(images[0]).toMatch(/^localhost\/outlive-test:/);
  }, 20 * 60_000);
});

/**
 * The host engine runs where PID 1 is systemd. This host is not such a
 * place, so the test goes into one: an nspawn container, where the scenario
 * runner itself runs with `--engine host`, as root, with no container of its own.
 */
describe.skipIf(nspawnMissing !== null)("--engine host, inside a systemd container", () => {
  it.each(["bookworm", "trixie"] as const)("on %s: the scenarios pass on the container's own systemd, and a user it made is gone after", async (suite) => {
    const c = await bootContainer({ suite, engine: "nspawn" }, () => {});
    try {
      // The project's cache may be a symlink out of the bind mount: the inner runner keeps its state in /tmp.
      const run = await c.exec([
        "/usr/local/bin/node", "dist/harness/run-scenarios.js", "restart-adopt", "arguments",
        "--engine", "host", "--cache-dir", "/tmp/outlive-cache", "--junit", "/tmp/host.xml",
      ], { timeoutMs: 240_000 });
      expect(run.exitCode, run.stdout + run.stderr).toBe(0);
      expect(run.stderr).toContain("engine: host");
      expect(run.stdout).toMatch(new RegExp(`^restart-adopt +host +${SYSTEMD[suite]} +pass`, "m"));
      expect(run.stdout).toMatch(/^2 passed, 0 failed, 0 skipped$/m);
      const junit = await c.exec(["cat", "/tmp/host.xml"]);
      expect(junit.stdout).toContain(`name="restart-adopt (systemd ${SYSTEMD[suite]})"`);

      // A user the host lacks is made with lingering, and teardown removes both.
      const made = await c.exec(["/usr/local/bin/node", "--input-type=module", "-e", `
        import { bootContainer } from "/work/project/dist/harness/host/container/mod.js";
        const h = await bootContainer({ engine: "host", user: "outlive-made", uid: 1500, cacheDir: "/tmp/outlive-cache" }, () => {});
        const during = h.info.readiness.systemState;
        const down = await h.teardown();
        console.log(JSON.stringify({ during, down }));
      `], { timeoutMs: 120_000 });
      expect(made.exitCode, made.stderr).toBe(0);
      expect(JSON.parse(made.stdout).down.leftovers).toEqual([]);
      expect((await c.exec(["getent", "passwd", "outlive-made"])).exitCode).not.toBe(0);
      expect((await c.exec(["test", "-e", "/var/lib/systemd/linger/outlive-made"])).exitCode).not.toBe(0);
    } finally {
      const down = await c.teardown();
      expect(down.leftovers).toEqual([]);
    }
  }, 10 * 60_000);
});
