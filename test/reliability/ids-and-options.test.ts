// Ids become file, unit and cgroup names; options are checked at the door.
import fc from "fast-check";
import { existsSync, readdirSync } from "node:fs";
import { posix } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { CgroupV2Placement, checkTaskId, OutliveError, Supervisor, SystemdScopePlacement, TASK_ID_PATTERN } from "../../lib/internal.ts";
import { makeStorage, quietLog, removeAll } from "./support/hostile-storage.ts";

// Strings with the characters that matter for paths and unit names, plus anything.
const hostileId = fc.oneof(
  fc.string({ unit: fc.constantFrom("a", "z", "0", "-", ".", "/", "\\", "\0", "\n", " ", "A", "_", "@", "%", "*", "é") , maxLength: 70 }),
  fc.string({ unit: "binary", maxLength: 70 }),
  fc.constantFrom("..", ".", "../../etc", "a/../../b", "-a", "a".repeat(63), "a".repeat(64), "", "t-1\n", "t-1/", "%2e%2e"),
);

const storages: string[] = [];
afterAll(() => removeAll(...storages));

describe("ids and unit names", () => {
  it("every string is refused with E_BAD_ID or is a safe single path component and unit name", () => {
    const cg = new CgroupV2Placement({ prefix: "outlive-test-ids", mount: "/sys/fs/cgroup/unified", baseDir: "/sys/fs/cgroup/unified/outlive-test-ids" });
    const sd = new SystemdScopePlacement({ prefix: "outlive-test-ids" });
    fc.assert(
      fc.property(hostileId, (id) => {
        let accepted: string | null = null;
        try {
          accepted = checkTaskId(id);
        } catch (error) {
          expect(error).toBeInstanceOf(OutliveError);
          expect((error as OutliveError).code).toBe("E_BAD_ID");
          expect((error as OutliveError).message).toContain("task id");
        }
        for (const build of [() => cg.taskDir(id), () => sd.unitName(id)]) {
          if (accepted === null) {
            expect(build).toThrow(expect.objectContaining({ code: "E_BAD_ID" }));
          }
        }
        if (accepted !== null) {
          expect(accepted).toMatch(/^[a-z0-9][a-z0-9-]{0,62}$/);
          const dir = cg.taskDir(id);
          expect(posix.dirname(dir)).toBe("/sys/fs/cgroup/unified/outlive-test-ids");
          expect(posix.normalize(dir)).toBe(dir);
          expect(sd.unitName(id)).toMatch(/^outlive-test-ids-task-[a-z0-9][a-z0-9-]*\.scope$/);
          // systemd unit names: at most 255 bytes of [A-Za-z0-9:_.\-@]
          expect(sd.unitName(id).length).toBeLessThanOrEqual(255);
        }
      }),
      { numRuns: 2000 },
    );
  });

  it("run({ id }) refuses a hostile id before anything is made on disk", async () => {
    const storage = makeStorage("ids");
    storages.push(storage);
    const sup = await Supervisor.open({ storage, placement: "process-group", prefix: "outlive-test-ids", log: quietLog });
    try {
      await fc.assert(
        fc.asyncProperty(hostileId.filter((id) => !TASK_ID_PATTERN.test(id)), async (id) => {
          const error = await sup.run({ id, argv: ["true"] }).then(() => null, (e) => e);
          expect(error).toBeInstanceOf(OutliveError);
          expect(error.code).toBe("E_BAD_ID");
          expect(readdirSync(`${storage}/tasks`).filter((n) => !n.startsWith("."))).toEqual([]);
        }),
        { numRuns: 200 },
      );
      // Ids that are not strings at all.
      for (const id of [1, null, {}, ["a"], true] as unknown[]) {
        const error = await sup.run({ id: id as string, argv: ["true"] }).then(() => null, (e) => e);
        expect(error?.code).toBe("E_BAD_ID");
      }
      expect(existsSync("/etc/passwd")).toBe(true);
    } finally {
      await sup.close();
    }
  });
});

describe("bad options", () => {
  const cases: Array<[string, Record<string, unknown>]> = [
    ["storage", { storage: "" }],
    ["storage", { storage: 42 }],
    ["mode", { mode: "deamon" }],
    ["placement", { placement: "systemd" }],
    ["placement", { placement: "../cgroup-v2" }],
    ["prefix", { prefix: "Outlive" }],
    ["prefix", { prefix: "a/b" }],
    ["prefix", { prefix: "-x" }],
    ["prefix", { prefix: "x".repeat(40) }],
    ["prefix", { prefix: "" }],
    ["graceMs", { graceMs: -1 }],
    ["graceMs", { graceMs: 1.5 }],
    ["graceMs", { graceMs: Number.NaN }],
    ["graceMs", { graceMs: "2000" }],
    ["ceilingSeconds", { ceilingSeconds: 0 }],
    ["ceilingSeconds", { ceilingSeconds: Infinity }],
    ["livenessIntervalMs", { livenessIntervalMs: 0 }],
    ["replayConcurrency", { replayConcurrency: 0 }],
    ["replayPerTaskMs", { replayPerTaskMs: -5 }],
    ["tailBytes", { tailBytes: -1 }],
    ["backstopSlackSeconds", { backstopSlackSeconds: 2 ** 60 }],
    ["cgroupBase", { cgroupBase: "relative/dir" }],
    ["cgroupBase", { cgroupBase: 7 }],
    ["log", { log: "stderr" }],
  ];
  it.each(cases)("Supervisor.open: `%s` %j is E_BAD_OPTION naming the option and the value", async (name, bad) => {
    const storage = makeStorage("opts");
    storages.push(storage);
    const error = await Supervisor.open({ storage, log: quietLog, ...bad }).then(
      async (s) => (await s.close(), null),
      (e) => e,
    );
    expect(error).toBeInstanceOf(OutliveError);
    expect(error.code).toBe("E_BAD_OPTION");
    expect(error.message).toContain(`\`${name}\``);
    const value = bad[name];
    if (typeof value === "string" && value.length < 70) expect(error.message).toContain(JSON.stringify(value));
    else if (typeof value === "number" && Number.isFinite(value)) expect(error.message).toContain(String(value));
    // Refused at the door: nothing was made in the storage.
    expect(readdirSync(storage)).toEqual([]);
  });

  const runCases: Array<[string, Record<string, unknown>]> = [
    ["argv / shell", {}],
    ["argv / shell", { argv: ["true"], shell: "true" }],
    ["argv", { argv: [] }],
    ["argv", { argv: [""] }],
    ["argv", { argv: ["echo", 3] }],
    ["argv", { argv: "echo hi" }],
    ["argv", { argv: ["echo", "a\0b"] }],
    ["shell", { shell: "echo a\0b" }],
    ["shell", { shell: "   " }],
    ["shell", { shell: 42 }],
    ["timeoutSeconds", { argv: ["true"], timeoutSeconds: 0 }],
    ["timeoutSeconds", { argv: ["true"], timeoutSeconds: -1 }],
    ["timeoutSeconds", { argv: ["true"], timeoutSeconds: Number.NaN }],
    ["timeoutSeconds", { argv: ["true"], timeoutSeconds: 1e12 }],
    ["timeoutSeconds", { argv: ["true"], timeoutSeconds: "10" }],
    ["memoryMaxBytes", { argv: ["true"], memoryMaxBytes: 100 }],
    ["memoryMaxBytes", { argv: ["true"], memoryMaxBytes: 1.5e6 + 0.5 }],
    ["cwd", { argv: ["true"], cwd: "relative" }],
    ["cwd", { argv: ["true"], cwd: 3 }],
    ["env", { argv: ["true"], env: { A: 1 } }],
    ["env", { argv: ["true"], env: "A=1" }],
    ["key", { argv: ["true"], key: "" }],
    ["key", { argv: ["true"], key: "k".repeat(201) }],
  ];
  it("run: each bad spec is E_BAD_OPTION naming the field, and leaves no task behind", async () => {
    const storage = makeStorage("runopts");
    storages.push(storage);
    const sup = await Supervisor.open({ storage, placement: "process-group", log: quietLog });
    try {
      for (const [name, spec] of runCases) {
        const error = await sup.run(spec as never).then(() => null, (e) => e);
        expect(error, JSON.stringify(spec)).toBeInstanceOf(OutliveError);
        expect(error.code).toBe("E_BAD_OPTION");
        expect(error.message).toContain(`\`${name}\``);
      }
      for (const spec of [null, "echo", 5]) {
        const error = await sup.run(spec as never).then(() => null, (e) => e);
        expect(error?.code).toBe("E_BAD_OPTION");
      }
      expect(readdirSync(`${storage}/tasks`).filter((n) => !n.startsWith("."))).toEqual([]);
    } finally {
      await sup.close();
    }
  });

  it("Supervisor.open(null) and a non-object are E_BAD_OPTION, not a TypeError", async () => {
    for (const input of [null, "storage", 3]) {
      const error = await Supervisor.open(input as never).then(async (s) => (await s.close(), null), (e) => e);
      expect(error).toBeInstanceOf(OutliveError);
      expect(error.code).toBe("E_BAD_OPTION");
      expect(error.message).toContain("`options`");
    }
  });
});
