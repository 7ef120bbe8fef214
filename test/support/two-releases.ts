import { existsSync, mkdtempSync, readdirSync, readFileSync, rmdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, expect, type TestContext } from "vitest";
import { CgroupV2Placement } from "../../lib/internal.ts";
import { readExitMarkerNow } from "../../lib/observe/exit-marker.ts";
import { unfinishedGroupMembers } from "./group.ts";
import { buildPreviousRelease, PREVIOUS_RELEASE } from "./previous-release.ts";
import { type Release, releaseCli, releaseCliOk, type ReleaseCliResult, ReleaseSupervisor } from "./release-process.ts";
import { shimUnderTest } from "./shim-task.ts";
import { spawnerOf } from "./storage-processes.ts";
import { waitFor } from "./wait.ts";

/*
 * The fixture of the tests of the on-disk contract (test/compat/): this
 * build and the previous release, each run only in processes of its own,
 * on storages of the test's, and everything they leave ended after.
 */

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** This checkout's build, as its package is installed. */
export const THIS_BUILD: Release = { name: "this build", root: ROOT, cli: join(ROOT, "dist/scripts/bin.js"), lib: join(ROOT, "dist/pkg/outlive.js") };

export type Json = any;

/** One storage of one test: its placement and a cgroup prefix of its own. */
export interface Storage {
  dir: string;
  placement: string;
  prefix: string;
  /** `--storage DIR --placement P --prefix X`, which every command but `logs` takes. */
  flags: string[];
}

/** A task as both the CLI and the library take it. */
export interface Spec {
  id: string;
  argv: string[];
  timeoutSeconds?: number;
}

/** `outlive run` of `spec` on `s`. */
export function runArgs(s: Storage, spec: Spec): string[] {
  return ["run", ...s.flags, "--id", spec.id, ...(spec.timeoutSeconds ? ["--timeout", String(spec.timeoutSeconds)] : []), "--", ...spec.argv];
}

/*
 * The tasks the tests start: one that runs until it is killed (with an EXIT
 * trap, to show the kill lets it clean up), one that ends, with its own code,
 * only once told to (so it ends while no supervisor runs), one that ends at
 * once, and one its deadline ends. The ones that end say which process they
 * ran under (their parent's name): outlive-shim, or the wrapper's `sh`.
 */
export const trapFile = (s: Storage, id: string) => join(s.dir, `trap-ran-${id}`);
const goFile = (s: Storage, id: string) => join(s.dir, `go-${id}`);
/** Tells a task started with endsWhenTold to end. */
export const tell = (s: Storage, id: string) => writeFileSync(goFile(s, id), "");
export const runsUntilKilled = (s: Storage, id: string): Spec => ({
  id, argv: ["bash", "-c", `trap 'echo cleaned > ${trapFile(s, id)}' EXIT; echo armed; sleep 120`],
});
export const endsWhenTold = (s: Storage, id: string, code: number): Spec => ({
  id, argv: ["sh", "-c", `echo "under $(cat /proc/$PPID/comm)"; while [ ! -e ${goFile(s, id)} ]; do sleep 0.05; done; echo done; exit ${code}`],
});
export const endsAtOnce = (id: string, code: number): Spec => ({ id, argv: ["sh", "-c", `echo "under $(cat /proc/$PPID/comm)"; echo to-stderr >&2; exit ${code}`] });
export const timesOut = (id: string, seconds: number): Spec => ({ id, argv: ["sleep", "120"], timeoutSeconds: seconds });

/** The files of a task, read as they are on disk. */
export const recordOf = (s: Storage, id: string): Json => JSON.parse(readFileSync(join(s.dir, "tasks", id, "record.json"), "utf8"));
export const ioFile = (s: Storage, id: string, name: string) => join(s.dir, "tasks", id, "io", name);
export const readIo = (s: Storage, id: string, name: string) => (existsSync(ioFile(s, id, name)) ? readFileSync(ioFile(s, id, name), "utf8") : "");
export const exitCodeIn = (s: Storage, id: string): number | null => {
  const marker = readExitMarkerNow(ioFile(s, id, "exit"));
  return marker.kind === "code" ? marker.code : null;
};
/** Waits until a task started with runsUntilKilled has set its trap. */
export const armed = (s: Storage, id: string) => waitFor(`${id} to set its EXIT trap`, () => readIo(s, id, "stdout").includes("armed"));

/**
 * Both releases, the machine's means (the shim, cgroup v2), and the
 * storages and supervisors of one test file. `twoReleases()` at the top of
 * the file builds the previous release in its beforeAll (or says why not, and
 * each test that needs it skips) and ends what the file left in its afterAll.
 */
export class TwoReleases {
  private previous: Release | null = null;
  private noPrevious = "the previous release was not built yet";
  private readonly storages: Storage[] = [];
  private readonly supervisors: ReleaseSupervisor[] = [];
  private made = 0;

  private constructor(
    /** The shim this build's tasks run under, or null with the reason. */
    readonly shim: { path: string | null; reason?: string },
    /** The placements to test: process-group, and cgroup-v2 where it works. */
    readonly placements: string[],
    /** Why cgroup-v2 cannot be tested here, or null. */
    readonly noCgroup: string | null,
    /** Where the task cgroups' base and the spawner's home are made: beside each other, in the base's parent. */
    private readonly cgroupParent: string,
  ) {}

  static async make(label: string): Promise<TwoReleases> {
    const shim = shimUnderTest();
    if (shim.path === null) console.log(`${label}: the cases that need this build's tasks under outlive-shim are skipped: ${shim.reason}`);
    const probe = await new CgroupV2Placement({ prefix: `cmpprobe${process.pid}` }).probe();
    if (!probe.ok) console.log(`${label}: the cgroup-v2 cases are skipped: ${probe.reason}`);
    const t = new TwoReleases(
      shim,
      ["process-group", ...(probe.ok ? ["cgroup-v2"] : [])],
      probe.ok ? null : probe.reason,
      probe.ok ? dirname(String(probe.details.baseDir)) : "",
    );
    beforeAll(async () => {
      const built = await buildPreviousRelease((line) => console.log(`${label}: ${line}`));
      if (built.release) t.previous = { name: PREVIOUS_RELEASE, root: built.release.root, cli: built.release.cli, lib: built.release.lib };
      else console.log(`${label}: skipping: ${(t.noPrevious = built.skip)}`);
    }, 900_000);
    afterAll(() => t.cleanUp(label), 120_000);
    return t;
  }

  /** The previous release, or the test skipped with the reason. */
  old(ctx: TestContext): Release {
    if (!this.previous) ctx.skip(this.noPrevious);
    return this.previous!;
  }

  /** This build's shim, or the test skipped with the reason. */
  needShim(ctx: TestContext): string {
    if (this.shim.path === null) ctx.skip(this.shim.reason);
    return this.shim.path!;
  }

  /** Each release's processes get this machine's environment without outlive's own variables, and this build its shim. */
  envOf(release: Release): NodeJS.ProcessEnv {
    const env: NodeJS.ProcessEnv = {};
    for (const [k, v] of Object.entries(process.env)) if (!k.startsWith("OUTLIVE_")) env[k] = v;
    if (release === THIS_BUILD && this.shim.path !== null) env.OUTLIVE_SHIM = this.shim.path;
    return env;
  }

  cli(release: Release, args: string[]): Promise<ReleaseCliResult> {
    return releaseCli(release, args, this.envOf(release));
  }

  cliOk(release: Release, args: string[]): Promise<string> {
    return releaseCliOk(release, args, this.envOf(release));
  }

  newStorage(placement: string): Storage {
    const dir = mkdtempSync(join(tmpdir(), "outlive-compat-"));
    const prefix = `cmp${process.pid}-${++this.made}`;
    const s = { dir, placement, prefix, flags: ["--storage", dir, "--placement", placement, "--prefix", prefix] };
    this.storages.push(s);
    return s;
  }

  /**
   * A daemon's supervisor on `release`'s library. Its spawner, left running by a restart's drain or a crash,
   * lives on 5 minutes instead of the default 1 with no supervisor connected: a loaded machine must not let it
   * end by itself before the other release meets it. Every test ends it. `more`: other options.
   */
  async startSupervisor(release: Release, s: Storage, more: Record<string, unknown> = {}): Promise<ReleaseSupervisor> {
    const options = { storage: s.dir, placement: s.placement, prefix: s.prefix, mode: "daemon", control: false, spawnerIdleMs: 300_000, ...more };
    const sup = await ReleaseSupervisor.start(release, options, this.envOf(release));
    this.supervisors.push(sup);
    return sup;
  }

  /** `outlive wait --json ID`: the exit status and the record it printed. */
  async waitCli(release: Release, s: Storage, id: string): Promise<{ code: number; record: Json }> {
    const r = await this.cli(release, ["wait", ...s.flags, "--json", "--timeout", "60s", id]);
    const line = r.out.trim().split("\n").filter(Boolean).at(-1);
    if (!line) throw new Error(`${release.name}: outlive wait ${id} printed nothing (exit ${r.code}): ${r.err}`);
    return { code: r.code, record: JSON.parse(line) };
  }

  /** `outlive ps -a --json`, by id. */
  async psAll(release: Release, s: Storage): Promise<Record<string, Json>> {
    const out = JSON.parse(await this.cliOk(release, ["ps", ...s.flags, "-a", "--json"]));
    return Object.fromEntries(out.tasks.map((t: Json) => [t.id, t]));
  }

  /** Kills `id` through `release`'s CLI, and checks it ended `killed`, its EXIT trap ran and none of its processes is left. */
  async killAndCheck(release: Release, s: Storage, id: string): Promise<void> {
    const before = recordOf(s, id);
    const killed = await this.cli(release, ["kill", ...s.flags, "--grace", "5000", id]);
    expect(killed.code, killed.err).toBe(0);
    expect(killed.out).toContain("term");
    const end = await this.waitCli(release, s, id);
    expect(end.code).toBe(125);
    expect(end.record.state).toBe("killed");
    expect(readFileSync(trapFile(s, id), "utf8")).toBe("cleaned\n");
    // A zombie handed to PID 1 has ended: where PID 1 reaps nothing (npm in a CI container) it stays in the group.
    await waitFor(`${id}'s process group to be empty`, () => unfinishedGroupMembers(before.pgid).length === 0);
    const cgroupDir = before.location?.cgroupDir;
    if (cgroupDir) await waitFor(`${id}'s cgroup to be empty`, () => !existsSync(cgroupDir) || readFileSync(join(cgroupDir, "cgroup.procs"), "utf8").trim() === "");
  }

  /**
   * Ends what a test left on a storage (this build's `stop-all`, which ends
   * its tasks, its spawner, whichever release started it, and its cgroups)
   * and checks that nothing of it is left.
   */
  async endStorage(s: Storage): Promise<void> {
    const stopped = await this.cli(THIS_BUILD, ["stop-all", ...s.flags]);
    expect(stopped.code, stopped.err).toBe(0);
    await waitFor("the storage's spawner to be gone", () => spawnerOf(s.dir) === null, 20_000);
    await waitFor(`the cgroups of prefix ${s.prefix} to be removed`, () => this.prefixCgroups(s).length === 0, 20_000);
  }

  /** The cgroups of this storage's prefix (the task cgroups' base and the spawner's home), deepest first. */
  private prefixCgroups(s: Storage): string[] {
    if (!this.cgroupParent || !existsSync(this.cgroupParent)) return [];
    const found: string[] = [];
    const walk = (dir: string) => {
      for (const e of readdirSync(dir, { withFileTypes: true })) if (e.isDirectory()) walk(join(dir, e.name));
      found.push(dir);
    };
    for (const name of readdirSync(this.cgroupParent)) if (name === s.prefix || name.startsWith(`${s.prefix}-`)) walk(join(this.cgroupParent, name));
    return found;
  }

  /** What a failed test left: its supervisors, then each storage's tasks, spawner and cgroups. */
  private async cleanUp(label: string): Promise<void> {
    for (const sup of this.supervisors) if (sup.child.exitCode === null && sup.child.signalCode === null) sup.child.kill("SIGKILL");
    for (const s of this.storages) {
      if (!existsSync(s.dir)) continue;
      await this.cli(THIS_BUILD, ["stop-all", ...s.flags]).catch(() => {});
      const spawner = spawnerOf(s.dir);
      if (spawner && spawner.argv.some((a) => /spawner-main\.js$/.test(a)) && spawner.argv.includes(spawner.socket)) process.kill(spawner.pid, "SIGKILL");
      for (const dir of this.prefixCgroups(s)) {
        try {
          rmdirSync(dir);
        } catch (error) {
          console.log(`${label}: could not remove ${dir}: ${(error as Error).message}`);
        }
      }
      rmSync(s.dir, { recursive: true, force: true });
    }
  }
}
