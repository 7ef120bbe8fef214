import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ContainerError, describeFailure } from "../../harness/host/container/errors.ts";
import { findHostCgroups, launchCgroupDirs } from "../../harness/host/container/host-checks/host-cgroup.ts";
import { mountsUnder } from "../../harness/host/container/host-checks/mounts.ts";
import { nspawnArgv } from "../../harness/host/container/engine/nspawn/nspawn.ts";
import { needsCgroup2Mount } from "../../harness/host/container/host-checks/cgroup2-mount.ts";
import { ociRunArgv } from "../../harness/host/container/engine/oci/oci.ts";
import { testImageTag } from "../../harness/host/container/engine/oci/oci-image.ts";
import { linkedNodeModules, resolveOptions } from "../../harness/host/container/options.ts";
import { classifySystemState, parseSystemdVersion } from "../../harness/host/container/readiness.ts";
import { PACKAGES, recipeFor, recipeHash } from "../../harness/host/container/image/recipe.ts";
import { startedRunArgv, startedUserRunArgv, waitedRunArgv } from "../../harness/host/container/systemd-run.ts";

// Plain data only: no root, no container.

const HYBRID = [
  "24 30 0:22 / /sys/fs/cgroup ro,nosuid shared:9 - tmpfs tmpfs ro,mode=755",
  "25 24 0:23 / /sys/fs/cgroup/unified rw,nosuid shared:10 - cgroup2 cgroup2 rw",
  "26 24 0:24 / /sys/fs/cgroup/systemd rw,nosuid shared:11 - cgroup cgroup rw,xattr,name=systemd",
  "27 24 0:25 / /sys/fs/cgroup/memory rw,nosuid shared:12 - cgroup cgroup rw,memory",
].join("\n");
const UNIFIED = "24 30 0:22 / /sys/fs/cgroup rw,nosuid shared:9 - cgroup2 cgroup2 rw,nsdelegate";

describe("host cgroups", () => {
  it("finds v2 and the legacy name=systemd mirror on a hybrid host", () => {
    const host = findHostCgroups(HYBRID);
    expect(host).toEqual({ layout: "hybrid", v2: "/sys/fs/cgroup/unified", v1Systemd: "/sys/fs/cgroup/systemd" });
    expect(launchCgroupDirs(host, "m1")).toEqual([
      "/sys/fs/cgroup/unified/outlive-container-m1",
      "/sys/fs/cgroup/systemd/outlive-container-m1",
    ]);
  });
  it("finds pure v2", () => {
    expect(findHostCgroups(UNIFIED)).toEqual({ layout: "unified", v2: "/sys/fs/cgroup", v1Systemd: null });
  });
  it("says what is missing without cgroup v2", () => {
    expect(() => findHostCgroups(HYBRID.split("\n").filter((l) => !l.includes("cgroup2")).join("\n"))).toThrow(/no cgroup v2/);
  });
});

describe("mountsUnder", () => {
  it("lists mounts at or below a dir, deepest first, with escapes undone", () => {
    const info = [
      "1 0 0:1 / /a rw - ext4 x rw",
      "2 1 0:2 / /a/b rw - proc proc rw",
      "3 2 0:3 / /a/b/c\\040d rw - sysfs sysfs rw",
      "4 1 0:4 / /ab rw - tmpfs tmpfs rw",
    ].join("\n");
    expect(mountsUnder("/a/b", info)).toEqual(["/a/b/c d", "/a/b"]);
  });
});

describe("systemd-run argv", () => {
  const runAs = { user: "outlive", uid: 1000 };
  it("waits, pipes and passes argv after --, untouched", () => {
    const argv = ["sh", "-c", 'echo "$$ ${x}"'];
    expect(waitedRunArgv({ unit: "u1", argv, runAs, env: { A: "b c" }, cwd: "/w", runtimeMaxSec: 9 })).toEqual([
      "systemd-run", "--wait", "--pipe", "--collect", "--unit=u1", "--quiet",
      "--uid=outlive", "-E", "XDG_RUNTIME_DIR=/run/user/1000", "-E", "A=b c",
      "--working-directory=/w", "-p", "RuntimeMaxSec=9", "--", ...argv,
    ]);
  });
  it("starts a long-lived unit without waiting", () => {
    expect(startedRunArgv({ unit: "m", argv: ["sleep", "1"], properties: ["KillMode=mixed"] })).toEqual([
      "systemd-run", "--unit=m", "--quiet", "-p", "KillMode=mixed", "--", "sleep", "1",
    ]);
  });
  it("starts a user unit through the user's bus", () => {
    const argv = startedUserRunArgv({ unit: "m", argv: ["true"] }, 1000);
    expect(argv.slice(0, 5)).toEqual([
      "env", "XDG_RUNTIME_DIR=/run/user/1000", "DBUS_SESSION_BUS_ADDRESS=unix:path=/run/user/1000/bus", "systemd-run", "--user",
    ]);
  });
});

describe("readiness", () => {
  it("tells ready from worth waiting from hopeless", () => {
    expect(["running", "degraded", "starting", "initializing", "offline", "", "maintenance", "stopping"].map(classifySystemState))
      .toEqual(["ready", "ready", "wait", "wait", "wait", "wait", "hopeless", "hopeless"]);
  });
  it("reads the systemd version", () => {
    expect(parseSystemdVersion("systemd 257 (257.13-1~deb13u1)\n+PAM")).toBe(257);
    expect(parseSystemdVersion("nope")).toBeNull();
  });
});

describe("options and recipe", () => {
  it("names the option, the value and its type", () => {
    expect(() => resolveOptions({ suite: "sid" as never })).toThrow("Expected the `suite` option to be one of bookworm, trixie, bookworm-5.10, got `sid` (string)");
    expect(() => resolveOptions({ bootTimeoutMs: -1 })).toThrow(/`bootTimeoutMs`.*`-1` \(number\)/);
    expect(() => resolveOptions({ name: "Bad Name" })).toThrow(/`name`/);
    expect(() => resolveOptions({ engine: "lxc" as never })).toThrow("Expected the `engine` option to be auto, nspawn, podman, docker, host or vm, got `lxc` (string)");
    expect(() => resolveOptions({ ociCommand: "podman; rm -rf /" })).toThrow(/`ociCommand` option to be a command name or path/);
  });
  it("has defaults for everything", () => {
    const o = resolveOptions({ name: "m1" });
    // The Node that runs the harness (vitest runs under node), wherever it is installed.
    expect(o).toMatchObject({ suite: "bookworm", unified: true, engine: "auto", user: "outlive", uid: 1000, nodePath: process.execPath, ociCommand: null });
    expect(o.runDir).toBe(`${o.cacheDir}/runs/m1`);
  });
  it("hashes the recipe per suite and setup script", () => {
    const base = resolveOptions({ name: "m1" });
    const a = recipeFor(base);
    expect(a.packages).toBe(PACKAGES);
    expect(recipeHash(a)).toBe(recipeHash(recipeFor(base)));
    expect(recipeHash(recipeFor({ ...base, suite: "trixie" }))).not.toBe(recipeHash(a));
    expect(recipeHash({ ...a, setupScript: `${a.setupScript}\n# edit` })).not.toBe(recipeHash(a));
  });
  it("boots nspawn from the cache with a writable overlay, Node and the project bound", () => {
    const o = resolveOptions({ name: "m1", projectDir: "/p" });
    expect(nspawnArgv(o, "/r")).toEqual(expect.arrayContaining([
      "--volatile=overlay", "--boot", "--register=no", "--keep-unit", "--console=pipe",
      `--bind-ro=${process.execPath}:/usr/local/bin/node`, "--bind=/p:/work/project",
    ]));
  });
  it("binds a node_modules that links out of the project (a worktree sharing a checkout's) where the link points", () => {
    const root = mkdtempSync(join(tmpdir(), "outlive-links-"));
    try {
      mkdirSync(join(root, "shared", "node_modules"), { recursive: true });
      mkdirSync(join(root, "wt"));
      expect(linkedNodeModules(join(root, "wt"))).toEqual([]);
      symlinkSync(join(root, "shared", "node_modules"), join(root, "wt", "node_modules"));
      // Pointing into /tmp: some engines cover /tmp inside with a tmpfs, so it is not bound there.
      expect(linkedNodeModules(join(root, "wt"))).toEqual([]);
      rmSync(join(root, "wt", "node_modules"));
      const real = realpathSync(join(root, "shared", "node_modules"));
      symlinkSync("../shared/node_modules", join(root, "wt", "node_modules"));
      expect(linkedNodeModules(join(root, "wt"))).toEqual([{ host: real, inside: "/work/shared/node_modules", readonly: true }]);
      expect(linkedNodeModules(join(root, "shared"))).toEqual([]);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
  it("runs podman privileged, offline, with systemd mode and the host's Node; docker with a private cgroupns instead", () => {
    const o = resolveOptions({ name: "m1", projectDir: "/p", nodePath: "/n/node" });
    const podman = ociRunArgv("podman", o, "localhost/outlive-test:bookworm-x");
    expect(podman.slice(0, 3)).toEqual(["podman", "run", "--detach"]);
    expect(podman).toEqual(expect.arrayContaining(["--privileged", "--network=none", "--systemd=always", "/n/node:/usr/local/bin/node:ro", "/p:/work/project"]));
    expect(podman.slice(-2)).toEqual(["localhost/outlive-test:bookworm-x", "/sbin/init"]);
    const docker = ociRunArgv("docker", { ...o, ociCommand: "/opt/docker" }, "t");
    expect(docker[0]).toBe("/opt/docker");
    expect(docker).toEqual(expect.arrayContaining(["--cgroupns=private", "--tmpfs"]));
    expect(docker).not.toContain("--systemd=always");
  });
  it("names the image after the rootfs and the Containerfile, so editing either builds anew", () => {
    const tag = testImageTag("trixie", "abc", "FROM x");
    expect(tag).toMatch(/^localhost\/outlive-test:trixie-[0-9a-f]{12}$/);
    expect(testImageTag("trixie", "abc", "FROM x")).toBe(tag);
    expect(testImageTag("trixie", "abd", "FROM x")).not.toBe(tag);
    expect(testImageTag("trixie", "abc", "FROM y")).not.toBe(tag);
  });
  it("mounts cgroup v2 only for a job container with v1 under a tmpfs and no cgroup2 anywhere", () => {
    const jobV1 = HYBRID.split("\n").filter((l) => !l.includes("cgroup2")).join("\n");
    expect(needsCgroup2Mount(jobV1)).toBe(true);
    expect(needsCgroup2Mount(HYBRID)).toBe(false);
    expect(needsCgroup2Mount(UNIFIED)).toBe(false);
  });
});

describe("describeFailure", () => {
  it("gives 77 for cannot-run-here, 1 otherwise, in one line", () => {
    expect(describeFailure(new ContainerError("not-root", "needs root"))).toEqual({ line: "container: needs root", exitCode: 77 });
    expect(describeFailure(new ContainerError("exec-timeout", "slow")).exitCode).toBe(1);
    expect(describeFailure(new ContainerError("boot-failed", "x", ["/k"])).line).toBe("container: x (kept: /k)");
  });
});
