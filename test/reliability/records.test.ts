// Hostile records: whatever is in a task directory, the supervisor opens,
// replays the other tasks normally, follows no symlink, and changes no other task.
import fc from "fast-check";
import { spawn, spawnSync } from "node:child_process";
import {
  chmodSync,
  chownSync,
  closeSync,
  constants,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmdirSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { OutliveError, parseRecord, SCHEMA_VERSION, Supervisor, type ReplayReport } from "../../lib/mod.ts";
import {
  goodRecord,
  hashOthers,
  hashTree,
  makeBait,
  makeStorage,
  quietLog,
  recordText,
  removeAll,
  writeTask,
} from "./support/hostile-storage.ts";
import { waitFor } from "../support/wait.ts";

const PREFIX = "outlive-test-hostile";
const open = (storage: string) => Supervisor.open({ storage, placement: "process-group", prefix: PREFIX, log: quietLog });
const GOOD = ["g-1", "g-2", "g-3"];
const HOSTILE = "h-1";

const temps: string[] = [];
afterEach(() => removeAll(...temps.splice(0)));

function storageWithGood(): string {
  const root = makeStorage();
  temps.push(root);
  for (const id of GOOD) writeTask(root, id, recordText(goodRecord(id)));
  return root;
}

/** Opens, checks the good tasks were replayed untouched, and returns what it reported about the hostile one. */
async function openAndCheck(root: string, hostile: string) {
  const before = hashOthers(root, hostile);
  const sup = await open(root);
  try {
    expect(sup.list().map((r) => r.id).filter((id) => GOOD.includes(id)).sort()).toEqual(GOOD);
    expect(sup.replayReport.unchanged).toEqual(expect.arrayContaining(GOOD));
    const entry = sup.replayReport.unreadable.find((u) => u.id === hostile) ?? null;
    const loaded = sup.list().find((r) => r.id === hostile) ?? null;
    return { entry, loaded, report: sup.replayReport };
  } finally {
    await sup.close();
    expect(hashOthers(root, hostile)).toEqual(before);
  }
}

/** A quarantined entry was moved, not deleted: same bytes, with the reason beside it. */
function expectQuarantined(root: string, hostile: string, original: Uint8Array | string, entry: ReplayReport["unreadable"][number]) {
  expect(entry.problem.kind).toBe("corrupt");
  expect(entry.problem.reason.length).toBeGreaterThan(5);
  expect(entry.quarantinedTo).toMatch(new RegExp(`^${join(root, "quarantine", hostile)}\\.`));
  expect(existsSync(join(root, "tasks", hostile))).toBe(false);
  expect(readFileSync(join(entry.quarantinedTo!, "record.json"))).toEqual(Buffer.from(original));
  expect(readFileSync(join(entry.quarantinedTo!, "quarantine-reason.txt"), "utf8")).toBe(`${entry.problem.reason}\n`);
}

const FIELDS = Object.keys(goodRecord("x")).filter((f) => f !== "schemaVersion");

const mutation = fc.oneof(
  fc.record({
    kind: fc.constant("truncated" as const),
    cut: fc.double({ min: 0, max: 1, noNaN: true }),
  }).map(({ cut }) => {
    const full = recordText(goodRecord(HOSTILE));
    // Cutting only the final newline leaves valid JSON; cut at least one more byte.
    return { kind: "truncated", content: full.slice(0, Math.floor(cut * (full.length - 2))) as string | Uint8Array, field: null as string | null };
  }),
  fc.uint8Array({ maxLength: 600 }).map((bytes) => ({ kind: "random-bytes", content: bytes as string | Uint8Array, field: null as string | null })),
  fc.record({ field: fc.constantFrom(...FIELDS), value: fc.oneof(fc.anything(), fc.string(), fc.integer(), fc.constant(null), fc.double()) })
    .map(({ field, value }) => {
      const r = goodRecord(HOSTILE) as unknown as Record<string, unknown>;
      r[field] = value;
      return { kind: "wrong-type", content: recordText(r) as string | Uint8Array, field: field as string | null };
    }),
  fc.record({ field: fc.constantFrom("outputTail", "reason", "cwd", "key"), size: fc.integer({ min: 1, max: 3 << 19 }) })
    .map(({ field, size }) => {
      const r = goodRecord(HOSTILE) as unknown as Record<string, unknown>;
      r[field] = "x".repeat(size);
      return { kind: "huge", content: recordText(r) as string | Uint8Array, field: field as string | null };
    }),
  // Newer than this outlive's schema: from 2 it drew the current version (2 since the schema moved) in some runs.
  fc.integer({ min: SCHEMA_VERSION + 1, max: 2 ** 40 }).map((v) => ({
    kind: "newer-schema",
    content: recordText({ ...goodRecord(HOSTILE), schemaVersion: v, someFutureField: { x: 1 } }) as string | Uint8Array,
    field: null as string | null,
  })),
);

describe("hostile record contents", () => {
  it("each is loaded, quarantined with its reason, or (newer schema) left untouched; nothing else changes", async () => {
    await fc.assert(
      fc.asyncProperty(mutation, async ({ kind, content, field }) => {
        const root = storageWithGood();
        const dir = writeTask(root, HOSTILE, content);
        const hostileHash = hashTree(dir);
        const oracle = parseRecord(Buffer.from(content).toString("utf8"), HOSTILE);
        const { entry, loaded } = await openAndCheck(root, HOSTILE);
        if (Buffer.byteLength(content) > 1 << 20) {
          expect(entry?.problem.reason).toMatch(/record\.json is \d+ bytes/);
          expectQuarantined(root, HOSTILE, content, entry!);
        } else if (oracle.ok) {
          expect(["wrong-type", "huge"]).toContain(kind);
          expect(loaded?.id).toBe(HOSTILE);
        } else if (oracle.problem.kind === "newer-schema") {
          expect(kind).toBe("newer-schema");
          expect(entry).toMatchObject({ quarantinedTo: null, problem: { kind: "newer-schema" } });
          expect(entry!.problem.reason).toMatch(/newer outlive/);
          expect(hashTree(dir)).toBe(hostileHash);
        } else {
          expect(kind).not.toBe("newer-schema");
          expect(entry!.problem.reason).toBe(oracle.problem.reason);
          if (kind === "wrong-type" && !["id", "state"].includes(field!)) expect(entry!.problem.reason).toContain(`"${field}"`);
          expectQuarantined(root, HOSTILE, content, entry!);
        }
        removeAll(root);
      }),
      { numRuns: 40 },
    );
  }, 240_000);

  it("a record whose id is not its directory's is quarantined, naming both", async () => {
    const root = storageWithGood();
    const content = recordText(goodRecord("g-2"));
    writeTask(root, HOSTILE, content);
    const { entry } = await openAndCheck(root, HOSTILE);
    expect(entry!.problem.reason).toContain('"g-2"');
    expect(entry!.problem.reason).toContain(`"${HOSTILE}"`);
    expectQuarantined(root, HOSTILE, content, entry!);
  });

  it("a record with a process group other than its pid is corrupt (no real task has one)", async () => {
    const root = storageWithGood();
    const content = recordText(goodRecord(HOSTILE, { state: "running", exitCode: null, pid: 999_999, pgid: 1, acknowledgedAt: null }));
    writeTask(root, HOSTILE, content);
    const { entry } = await openAndCheck(root, HOSTILE);
    expect(entry!.problem.reason).toContain('"pgid"');
    expectQuarantined(root, HOSTILE, content, entry!);
  });
});

describe("symlinks and special files in a task directory", () => {
  const baits: Array<ReturnType<typeof makeBait>> = [];
  afterEach(() => removeAll(...baits.splice(0).map((b) => b.dir)));
  const bait = () => {
    const b = makeBait();
    baits.push(b);
    return b;
  };

  /** The bait was neither read nor written, and its content appears nowhere in the storage. */
  function expectBaitUntouched(root: string, b: ReturnType<typeof makeBait>, stamp: string) {
    expect(b.stamp()).toBe(stamp);
    const grep = spawnSync("grep", ["-rqF", b.secret.trim(), root]);
    expect(grep.status).toBe(1); // 1: no match (a symlink is not followed by grep -r either)
  }

  it("record.json as a symlink to a file outside the storage is not followed", async () => {
    const root = storageWithGood();
    const b = bait();
    writeFileSync(b.file, recordText(goodRecord(HOSTILE))); // a valid record: following it would load it
    const stamp = b.stamp();
    const dir = writeTask(root, HOSTILE, "");
    rmSync(join(dir, "record.json"));
    symlinkSync(b.file, join(dir, "record.json"));
    const { entry, loaded } = await openAndCheck(root, HOSTILE);
    expect(loaded).toBeNull();
    expect(entry!.problem.reason).toContain("symlink");
    expect(entry!.quarantinedTo).not.toBeNull();
    expect(b.stamp()).toBe(stamp);
  });

  it("a task directory that is a symlink to a directory outside is moved aside as a link, never entered", async () => {
    const root = storageWithGood();
    const outside = mkdtempSync(join(tmpdir(), "outlive-outside-"));
    temps.push(outside);
    writeTask(outside, HOSTILE, recordText(goodRecord(HOSTILE)));
    const target = join(outside, "tasks", HOSTILE);
    const outsideHash = hashTree(outside);
    symlinkSync(target, join(root, "tasks", HOSTILE));
    const { entry, loaded } = await openAndCheck(root, HOSTILE);
    expect(loaded).toBeNull();
    expect(entry!.problem.reason).toContain("symlink");
    // The link itself was moved; its target is where it was, unchanged (no reason file written into it).
    expect(lstatSync(entry!.quarantinedTo!).isSymbolicLink()).toBe(true);
    expect(readlinkSync(entry!.quarantinedTo!)).toBe(target);
    expect(readFileSync(`${entry!.quarantinedTo}.reason.txt`, "utf8")).toContain("symlink");
    expect(hashTree(outside)).toBe(outsideHash);
  });

  // Replaying a task that died reads its io/ files: a link there must not lead outside.
  it.each(["stdout", "stderr", "exit", "timed-out"])("io/%s as a symlink to a file outside is never read", async (name) => {
    const root = storageWithGood();
    const b = bait();
    if (name === "exit") writeFileSync(b.file, "0\n");
    const stamp = b.stamp();
    const content = recordText(goodRecord(HOSTILE, { state: "running", exitCode: null, reason: null, finishedAt: null, pid: 999_999, pgid: 999_999, acknowledgedAt: null }));
    const dir = writeTask(root, HOSTILE, content);
    rmSync(join(dir, "io", "stdout"));
    symlinkSync(b.file, join(dir, "io", name));
    const { entry, loaded } = await openAndCheck(root, HOSTILE);
    expect(b.stamp()).toBe(stamp);
    expect(JSON.stringify(loaded ?? {})).not.toContain(b.secret.trim());
    expect(entry?.problem.reason).toContain(`io/${name}`);
    expectBaitUntouched(root, b, stamp);
  });

  it("io/ as a symlink to a directory outside is never entered", async () => {
    const root = storageWithGood();
    const b = bait();
    writeFileSync(join(b.dir, "exit"), "0\n");
    writeFileSync(join(b.dir, "stdout"), b.secret);
    const outsideHash = hashTree(b.dir);
    const content = recordText(goodRecord(HOSTILE, { state: "running", exitCode: null, reason: null, finishedAt: null, pid: 999_999, pgid: 999_999, acknowledgedAt: null }));
    const dir = writeTask(root, HOSTILE, content);
    removeAll(join(dir, "io"));
    symlinkSync(b.dir, join(dir, "io"));
    const { entry, loaded } = await openAndCheck(root, HOSTILE);
    expect(loaded).toBeNull(); // following it would have read exit code 0 from outside
    expect(entry!.problem.reason).toContain("io");
    expect(hashTree(b.dir)).toBe(outsideHash);
  });

  // A FIFO blocks an ordinary open() for ever: one of them must not hang the supervisor's start.
  it.each(["record.json", "io/stdout", "io/exit"])("%s as a FIFO neither hangs nor is read", async (name) => {
    const root = storageWithGood();
    const content = recordText(goodRecord(HOSTILE, { state: "running", exitCode: null, reason: null, finishedAt: null, pid: 999_999, pgid: 999_999, acknowledgedAt: null }));
    const dir = writeTask(root, HOSTILE, content);
    const fifo = join(dir, name);
    removeAll(fifo);
    expect(spawnSync("mkfifo", [fifo]).status).toBe(0);
    let timer: ReturnType<typeof setTimeout> | undefined;
    try {
      const hung = new Promise<"hung">((r) => (timer = setTimeout(() => r("hung"), 30_000)));
      const result = await Promise.race([openAndCheck(root, HOSTILE), hung]);
      expect(result).not.toBe("hung");
      if (result !== "hung") expect(result.entry!.problem.reason).toContain(name);
    } finally {
      clearTimeout(timer);
      releaseFifo(fifo);
      releaseFifo(join(root, "quarantine"));
    }
  }, 20_000);

  it.each([
    ["record.json is a directory", (dir: string) => { removeAll(join(dir, "record.json")); mkdirSync(join(dir, "record.json")); }, "not a regular file"],
    ["record.json is missing", (dir: string) => removeAll(join(dir, "record.json")), "missing"],
    ["the task entry is a regular file", (dir: string) => { removeAll(dir); writeFileSync(dir, "{}"); }, "not a directory"],
  ] as const)("%s: quarantined with the reason", async (_, make, reason) => {
    const root = storageWithGood();
    const dir = writeTask(root, HOSTILE, recordText(goodRecord(HOSTILE)));
    make(dir);
    const { entry } = await openAndCheck(root, HOSTILE);
    expect(entry!.problem.reason).toContain(reason);
    expect(entry!.quarantinedTo).not.toBeNull();
    expect(existsSync(entry!.quarantinedTo!)).toBe(true);
  });

  it("an entry whose name is not a task id is moved aside, not read", async () => {
    const root = storageWithGood();
    writeTask(root, "Not An Id", recordText(goodRecord("g-9")));
    const { entry } = await openAndCheck(root, "Not An Id");
    expect(entry!.problem.reason).toContain("not a valid task id");
    expect(readdirSync(join(root, "quarantine")).some((n) => n.startsWith("Not An Id."))).toBe(true);
  });
});

describe("a task's creation cut short by a power cut", () => {
  // The state soak-power left at each cut at a first record's rename (systemd 257's guest): the journal commit of the
  // temp file's flush carried the task's directory, its empty io/ and the temp file; the rename's own commit never
  // came. No record, no process: there is no task to report, and nothing to quarantine.
  function cutShort(root: string): void {
    mkdirSync(join(root, "tasks", "c-1", "io"), { recursive: true, mode: 0o700 });
    writeFileSync(join(root, "tasks", "c-1", ".record.json.4242.0a1b2c3d.tmp"), recordText(goodRecord("c-1", { state: "starting" })), { mode: 0o600 });
    // Cut before the temp file's flush: the directories alone.
    mkdirSync(join(root, "tasks", "c-2", "io"), { recursive: true, mode: 0o700 });
    mkdirSync(join(root, "tasks", "c-3"), { mode: 0o700 });
  }

  it("is removed at open, not quarantined, and said in the log; the other tasks are untouched", async () => {
    const root = storageWithGood();
    cutShort(root);
    const before = GOOD.map((id) => hashTree(join(root, "tasks", id)));
    const logs: string[] = [];
    const sup = await Supervisor.open({ storage: root, placement: "process-group", prefix: PREFIX, log: (line: string) => logs.push(line) });
    try {
      expect(sup.list().map((r) => r.id).sort()).toEqual(GOOD);
      expect(sup.replayReport.unreadable).toEqual([]);
    } finally {
      await sup.close();
    }
    for (const id of ["c-1", "c-2", "c-3"]) {
      expect(existsSync(join(root, "tasks", id))).toBe(false);
      expect(logs.some((l) => l.includes(`task ${id}:`) && l.includes("cut short"))).toBe(true);
    }
    expect(existsSync(join(root, "quarantine")) ? readdirSync(join(root, "quarantine")) : []).toEqual([]);
    expect(GOOD.map((id) => hashTree(join(root, "tasks", id)))).toEqual(before);
  });

  it("is left as it is by a read-only view", async () => {
    const root = storageWithGood();
    cutShort(root);
    const before = hashTree(join(root, "tasks"));
    const view = await Supervisor.open({ storage: root, readOnly: true, log: quietLog });
    await view.close();
    expect(hashTree(join(root, "tasks"))).toBe(before);
  });

  it.each([
    ["output in io/", (dir: string) => writeFileSync(join(dir, "io", "stdout"), "ran\n")],
    ["a file that is not a temp record", (dir: string) => writeFileSync(join(dir, "notes"), "x")],
    ["io/ as a symlink", (dir: string) => { rmdirSync(join(dir, "io")); symlinkSync("/tmp", join(dir, "io")); }],
  ] as const)("is still quarantined with %s beside the missing record: that is evidence of a task", async (_, make) => {
    const root = storageWithGood();
    const dir = join(root, "tasks", HOSTILE);
    mkdirSync(join(dir, "io"), { recursive: true, mode: 0o700 });
    make(dir);
    const { entry } = await openAndCheck(root, HOSTILE);
    expect(entry!.problem.reason).toContain("record.json is missing");
    expect(entry!.quarantinedTo).not.toBeNull();
  });
});

/** Lets any reader blocked on a FIFO go (it sees EOF), so a failing test cannot hang the worker. */
function releaseFifo(path: string): void {
  const visit = (p: string) => {
    let info;
    try {
      info = lstatSync(p);
    } catch {
      return;
    }
    if (info.isFIFO()) {
      try {
        closeSync(openSync(p, constants.O_WRONLY | constants.O_NONBLOCK));
      } catch {
        // no reader: nothing blocked on it
      }
    } else if (info.isDirectory()) for (const n of readdirSync(p)) visit(join(p, n));
  };
  visit(path);
}

describe("the storage root", () => {
  it("owned by another user: refused with E_STORAGE naming the path and the owner", async () => {
    if (process.getuid?.() !== 0) return console.log("skipped: chown needs root");
    const root = storageWithGood();
    chownSync(root, 65534, 65534);
    const before = hashTree(root);
    const error = await open(root).catch((e) => e);
    expect(error).toBeInstanceOf(OutliveError);
    expect(error.code).toBe("E_STORAGE");
    expect(error.message).toContain(root);
    expect(error.message).toContain("uid 65534");
    expect(hashTree(root)).toBe(before);
  });

  it.each([0o777, 0o722, 0o770, 0o702])("writable by others (mode %o): refused with E_STORAGE naming the mode", async (mode) => {
    const root = storageWithGood();
    chmodSync(root, mode);
    const error = await open(root).catch((e) => e);
    expect(error).toBeInstanceOf(OutliveError);
    expect(error.code).toBe("E_STORAGE");
    expect(error.message).toContain(root);
    expect(error.message).toContain(mode.toString(8));
    expect(existsSync(join(root, "supervisor.lock"))).toBe(false);
  });

  it("a path that is a file: E_STORAGE naming it", async () => {
    const dir = makeStorage();
    temps.push(dir);
    const file = join(dir, "file");
    writeFileSync(file, "");
    const error = await open(file).catch((e) => e);
    expect(error.code).toBe("E_STORAGE");
    expect(error.message).toContain(file);
  });
});

describe("a record naming a group, unit or cgroup that is not its own", () => {
  it("is quarantined, or names only `<prefix>-task-<its id>`", () => {
    const segment = fc.oneof(fc.constantFrom("..", ".", "", "outlive-task-h-1", "outlive-task-h-1.scope", "other-task-g-1", "ssh.service", "x-task-h-1"), fc.string({ maxLength: 12 }));
    const path = fc.array(segment, { maxLength: 5 }).map((xs) => `/${xs.join("/")}`);
    fc.assert(
      fc.property(fc.record({ unit: fc.option(segment, { nil: undefined }), cgroupDir: fc.option(path, { nil: undefined }), cgroup: fc.option(path, { nil: undefined }) }), (location) => {
        const loc = Object.fromEntries(Object.entries(location).filter(([, v]) => v !== undefined));
        const parsed = parseRecord(recordText(goodRecord(HOSTILE, { location: loc })), HOSTILE);
        if (!parsed.ok) {
          expect(parsed.problem.reason).toContain('"location"');
          return;
        }
        if (loc.unit !== undefined) expect(loc.unit).toMatch(new RegExp(`^[a-z][a-z0-9-]*-task-${HOSTILE}\\.scope$`));
        if (loc.cgroupDir !== undefined) {
          expect(loc.cgroupDir.split("/")).not.toContain("..");
          expect(loc.cgroupDir.split("/").at(-1)).toMatch(new RegExp(`^[a-z][a-z0-9-]*-task-${HOSTILE}(\\.scope)?$`));
        }
      }),
      { numRuns: 3000 },
    );
  });

  it.skipIf(!existsSync("/sys/fs/cgroup/unified/cgroup.procs"))("replay never kills another cgroup named in a record", async () => {
    const victimDir = "/sys/fs/cgroup/unified/outlive-test-victim";
    mkdirSync(victimDir);
    const sleeper = spawn("/bin/sh", ["-c", `echo $$ > ${victimDir}/cgroup.procs && exec sleep 60`], { detached: true, stdio: "ignore" });
    try {
      await waitFor("the victim in its cgroup", () => readFileSync(join(victimDir, "cgroup.procs"), "utf8").trim() === String(sleeper.pid));
      const root = storageWithGood();
      for (const location of [
        { cgroupDir: victimDir, cgroup: "/outlive-test-victim" },
        { cgroupDir: "/sys/fs/cgroup/unified/outlive-test-victim/../outlive-test-victim", cgroup: "/outlive-test-victim" },
      ]) {
        writeTask(root, HOSTILE, recordText(goodRecord(HOSTILE, {
          state: "running", exitCode: null, reason: null, finishedAt: null, pid: 999_999, pgid: 999_999, acknowledgedAt: null, placement: "cgroup-v2", location,
        })));
        const { entry } = await openAndCheck(root, HOSTILE);
        expect(entry!.problem.reason).toContain('"location"');
        expect(readFileSync(join(victimDir, "cgroup.procs"), "utf8").trim()).toBe(String(sleeper.pid));
      }
    } finally {
      sleeper.kill("SIGKILL");
      // The cgroup can be removed once the kernel has taken the sleeper out of it.
      for (let i = 0; i < 100 && readFileSync(join(victimDir, "cgroup.procs"), "utf8").trim() !== ""; i++) {
        await new Promise((r) => setTimeout(r, 20));
      }
      rmdirSync(victimDir);
    }
  });
});
