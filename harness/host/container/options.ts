import { lstatSync, readlinkSync, realpathSync } from "node:fs";
import { isAbsolute, join, resolve } from "node:path";
import { projectRoot } from "../../shared/project-root.ts";
import { hostDebianMirror } from "./image/apt-mirror.ts";
import { ENGINE_FACTS, ENGINE_NAMES, type EngineName, engineFacts, isEngineName } from "./engine-names.ts";
import { defaultCacheDir } from "./image/cache-dir.ts";
import { ContainerError } from "./errors.ts";
import { type AccelOption, DEFAULT_QEMU } from "./engine/vm/accel-probe.ts";

import { type Suite, SUITE_SPECS, SUITES } from "./image/suites.ts";
export { type Release, type Suite, SUITE_SPECS, SUITES, type SuiteSpec } from "./image/suites.ts";

/** One line when the suite needs a kernel of its own and the engine boots none (every engine but vm), else null. */
export function suiteEngineMismatch(suite: Suite, engine: EngineChoice): string | null {
  const from = SUITE_SPECS[suite].kernelFrom;
  if (from === null || engine === "vm") return null;
  return `the ${suite} suite boots Debian ${from}'s kernel, which only the vm engine can do; got engine ${engine} (use --engine vm, or suite ${SUITE_SPECS[suite].userland})`;
}

/** An engine by name (engine-names.ts), or `auto`: the first of those it tries that runs here. */
export type EngineChoice = EngineName | "auto";

/** What a caller may say about a container; every field has a default. */
export interface ContainerOptions {
  /** Suite (`SUITES`): a Debian release, or `bookworm-5.10` (vm engine only). Default `bookworm`. */
  suite?: Suite;
  /**
   * Pure cgroup v2 inside the container (`SYSTEMD_NSPAWN_UNIFIED_HIERARCHY=1`)
   * instead of the host's layout. Default true: checked on a hybrid host,
   * both layouts boot bookworm (252) and trixie (257), but 257 marks the
   * hybrid layout as tainted (cgroupsv1, deprecated), and unified is what
   * the machines outlive targets run.
   */
  unified?: boolean;
  /**
   * Which engine (engine-names.ts); `auto` (default) tries nspawn,
   * podman, then docker, and uses the first that really runs (engine-names.ts
   * says why in that order). `host` is never picked by `auto`.
   */
  engine?: EngineChoice;
  /** Machine name, also the host name inside. Default `outlive-<suite>-<pid>-<random>`. */
  name?: string;
  /** The unprivileged user with lingering enabled. Default `outlive`. */
  user?: string;
  /** Its uid (and gid). Default 1000. */
  uid?: number;
  /** Bound at /work/project inside. Default: the repository this file is in. */
  projectDir?: string;
  /** Root file systems and run directories. Default `$OUTLIVE_CONTAINER_CACHE`, else `$XDG_CACHE_HOME/outlive`, else `~/.cache/outlive` (cache-dir.ts). */
  cacheDir?: string;
  /**
   * The host's Node binary, bound read-only at /usr/local/bin/node. Default:
   * the Node running the harness, else `/usr/bin/node` (under Deno), so a
   * setup-node toolcache or an official node image's /usr/local/bin/node
   * works without saying so.
   */
  nodePath?: string;
  /**
   * Debian mirror for debootstrap and the guest image's kernel. Default: the
   * one this host's apt uses (`hostDebianMirror`: the first `deb` entry whose
   * path ends in /debian, in /etc/apt/sources.list.d/*.sources or
   * /etc/apt/sources.list); a build with neither says so.
   */
  mirror?: string;
  /**
   * The podman/docker client to run, a name on PATH or a path (e.g.
   * `podman-remote`). Default: the engine's own name.
   */
  ociCommand?: string;
  /** Bound on building a root file system. Default 15 minutes. */
  buildTimeoutMs?: number;
  /** Bound on boot until systemd and the user manager run. Default 60 s, or the engine's own (vm: 240 s, for software emulation). */
  bootTimeoutMs?: number;
  /** Bound on an orderly shutdown before everything left is killed. Default 15 s. */
  stopTimeoutMs?: number;
  /** More host directories bound read-write inside (a scenario file's folder, its reports). Default none. */
  binds?: readonly Bind[];
  /** vm engine: the qemu to run, a name on PATH or a path. Default `qemu-system-x86_64`. */
  qemuCommand?: string;
  /** vm engine: `auto` (default) boots a probe guest under KVM and falls back to TCG with KVM's reason; `kvm` or `tcg` force one. */
  vmAccel?: AccelOption;
  /** vm engine: the guest's memory in MiB. Default 1024. */
  vmMemoryMiB?: number;
  /** vm engine: the guest's virtual CPUs. Default 2. */
  vmCpus?: number;
  /** vm engine: the size of the guest's disk image in MiB (a sparse file; the root file system fills about 700). Default 3072. */
  vmDiskMiB?: number;
}

/** A host directory and where it appears inside the container (an absolute path outside /tmp and /run, which are tmpfs in some engines). */
export interface Bind {
  host: string;
  inside: string;
  /** Only read inside (a linked node_modules): the vm engine shares it read-only and cached; the others bind it as it is. */
  readonly?: boolean;
}

/** Options after checking: inner code trusts these. */
export interface ResolvedOptions {
  suite: Suite;
  unified: boolean;
  engine: EngineChoice;
  name: string;
  user: string;
  uid: number;
  projectDir: string;
  cacheDir: string;
  runDir: string;
  nodePath: string;
  mirror: string;
  ociCommand: string | null;
  buildTimeoutMs: number;
  bootTimeoutMs: number;
  stopTimeoutMs: number;
  binds: Bind[];
  qemuCommand: string;
  vmAccel: AccelOption;
  vmMemoryMiB: number;
  vmCpus: number;
  vmDiskMiB: number;
}

export const DEFAULTS = {
  suite: "bookworm" as Suite,
  unified: true,
  engine: "auto" as EngineChoice,
  user: "outlive",
  uid: 1000,
  nodePath: /(^|\/)node$/.test(process.execPath) ? process.execPath : "/usr/bin/node",
  buildTimeoutMs: 15 * 60_000,
  bootTimeoutMs: 60_000,
  stopTimeoutMs: 15_000,
  qemuCommand: DEFAULT_QEMU,
  vmAccel: "auto" as AccelOption,
  vmMemoryMiB: 1024,
  vmCpus: 2,
  vmDiskMiB: 3072,
} as const;

function fail(option: string, expected: string, value: unknown): never {
  throw new ContainerError(
    "bad-option",
    `Expected the \`${option}\` option to be ${expected}, got \`${String(value)}\` (${typeof value})`,
  );
}

function positiveInt(option: string, value: unknown, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== "number" || !Number.isInteger(value) || value <= 0) fail(option, "a positive integer", value);
  return value;
}

function absolutePath(option: string, value: unknown, fallback: string): string {
  if (value === undefined) return fallback;
  if (typeof value !== "string" || !isAbsolute(value)) fail(option, "an absolute path", value);
  return resolve(value);
}

/** Machine names become host names and unit names: keep them to what both accept. */
const NAME_PATTERN = /^[a-z0-9][a-z0-9-]{0,62}$/;
const USER_PATTERN = /^[a-z_][a-z0-9_-]{0,31}$/;

export function resolveOptions(options: ContainerOptions = {}): ResolvedOptions {
  const suite = options.suite ?? DEFAULTS.suite;
  if (!SUITES.includes(suite)) fail("suite", `one of ${SUITES.join(", ")}`, suite);
  const unified = options.unified ?? DEFAULTS.unified;
  if (typeof unified !== "boolean") fail("unified", "a boolean", unified);
  const engine = options.engine ?? DEFAULTS.engine;
  if (engine !== "auto" && !isEngineName(engine)) fail("engine", `auto, ${ENGINE_NAMES.slice(0, -1).join(", ")} or ${ENGINE_NAMES.at(-1)}`, engine);
  const mismatch = suiteEngineMismatch(suite, engine);
  if (mismatch) throw new ContainerError("bad-option", mismatch);
  // An engine that boots no suite (the host's own systemd) names its machine after itself.
  // Host names take no dots: bookworm-5.10's machines are outlive-bookworm-5-10-….
  const machineOf = engine !== "auto" && !ENGINE_FACTS[engine].bootsSuite ? engine : suite.replace(/[^a-z0-9-]/g, "-");
  const name = options.name ?? `outlive-${machineOf}-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  if (typeof name !== "string" || !NAME_PATTERN.test(name)) fail("name", "lower-case letters, digits and dashes (at most 63)", name);
  const user = options.user ?? DEFAULTS.user;
  if (typeof user !== "string" || !USER_PATTERN.test(user)) fail("user", "a plain user name", user);
  const uid = positiveInt("uid", options.uid, DEFAULTS.uid);
  if (uid >= 60000) fail("uid", "a regular uid below 60000", uid);
  const projectDir = absolutePath("projectDir", options.projectDir, projectRoot());
  const cacheDir = absolutePath("cacheDir", options.cacheDir, defaultCacheDir());
  const nodePath = absolutePath("nodePath", options.nodePath, DEFAULTS.nodePath);
  // "" when neither the option nor the host's apt names one: only a build needs it, and says so (requireMirror).
  const mirror = options.mirror ?? hostDebianMirror() ?? "";
  if (options.mirror !== undefined && (typeof mirror !== "string" || !/^https?:\/\//.test(mirror))) fail("mirror", "an http(s) URL", mirror);
  const ociCommand = options.ociCommand ?? null;
  if (ociCommand !== null && (typeof ociCommand !== "string" || !/^[\w./+-]+$/.test(ociCommand))) fail("ociCommand", "a command name or path", ociCommand);
  const qemuCommand = options.qemuCommand ?? DEFAULTS.qemuCommand;
  if (typeof qemuCommand !== "string" || !/^[\w./+-]+$/.test(qemuCommand)) fail("qemuCommand", "a command name or path", qemuCommand);
  const vmAccel = options.vmAccel ?? DEFAULTS.vmAccel;
  if (!["auto", "kvm", "tcg"].includes(vmAccel)) fail("vmAccel", "auto, kvm or tcg", vmAccel);
  return {
    suite,
    unified,
    engine,
    name,
    user,
    uid,
    projectDir,
    cacheDir,
    runDir: join(cacheDir, "runs", name),
    nodePath,
    mirror,
    ociCommand,
    buildTimeoutMs: positiveInt("buildTimeoutMs", options.buildTimeoutMs, DEFAULTS.buildTimeoutMs),
    bootTimeoutMs: positiveInt("bootTimeoutMs", options.bootTimeoutMs, (engine !== "auto" && engineFacts(engine).bootTimeoutMs) || DEFAULTS.bootTimeoutMs),
    stopTimeoutMs: positiveInt("stopTimeoutMs", options.stopTimeoutMs, DEFAULTS.stopTimeoutMs),
    qemuCommand,
    vmAccel,
    vmMemoryMiB: positiveInt("vmMemoryMiB", options.vmMemoryMiB, DEFAULTS.vmMemoryMiB),
    vmCpus: positiveInt("vmCpus", options.vmCpus, DEFAULTS.vmCpus),
    vmDiskMiB: positiveInt("vmDiskMiB", options.vmDiskMiB, DEFAULTS.vmDiskMiB),
    binds: [
      ...(options.binds ?? []).map((b, i) => {
        const host = absolutePath(`binds[${i}].host`, b?.host ?? "", "");
        const inside = absolutePath(`binds[${i}].inside`, b?.inside ?? "", "");
        if (/^\/(tmp|run)(\/|$)/.test(inside)) fail(`binds[${i}].inside`, "a path outside /tmp and /run", inside);
        return { host, inside };
      }),
      ...linkedNodeModules(projectDir),
    ],
  };
}

/**
 * A project whose node_modules is a symlink out of it (a git worktree that
 * shares another checkout's): the link's target bound where the link points
 * from /work/project, so zx and the rest resolve inside as on the host.
 * None when node_modules is a real directory or the link points inside the
 * project (or into /tmp or /run, which some engines cover with a tmpfs).
 */
export function linkedNodeModules(projectDir: string): Bind[] {
  const link = join(projectDir, "node_modules");
  try {
    if (!lstatSync(link).isSymbolicLink()) return [];
    const target = readlinkSync(link);
    const inside = resolve("/work/project", target);
    const host = realpathSync(link);
    if (inside === "/work/project" || inside.startsWith("/work/project/") || /^\/(tmp|run)(\/|$)/.test(inside)) return [];
    return [{ host, inside, readonly: true }];
  } catch {
    return [];
  }
}
