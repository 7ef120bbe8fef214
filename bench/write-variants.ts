// The ways of writing a record durably that bench/durable-write.ts compares, each a Variant.
import { createHash } from "node:crypto";
import { mkdirSync } from "node:fs";
import { type FileHandle, open, rename } from "node:fs/promises";
import { join } from "node:path";
import { writeFilesAtomic } from "../lib/store/write/atomic-batch.ts";
import { syncPath, tempPathFor, writeFileAtomic } from "../lib/store/write/atomic-write.ts";
import { TaskStore } from "../lib/store/task-store.ts";
import type { TaskRecord } from "../lib/store/record/record.ts";

/** A record as the store writes one: pretty-printed JSON, about a kilobyte. */
export const RECORD = `${JSON.stringify({
  schemaVersion: 1, id: "t-0123456789abcdef", key: null, generation: null, command: { argv: ["make", "-j4", "all"] }, cwd: "/home/user/project",
  state: "running", exitCode: null, reason: null, createdAt: new Date().toISOString(), startedAt: new Date().toISOString(), finishedAt: null,
  lastOutputAt: null, outputTail: null, timeoutSeconds: null, deadlineAt: new Date().toISOString(), deadlineIsTimeout: false, memoryMaxBytes: null,
  pid: 123456, pgid: 123456, startTime: "98765432", bootId: "0f8e2c1a-1111-2222-3333-444455556666", incarnation: "i-m4abcd-0a1b2c",
  supervisorCgroup: "/user.slice/user-1000.slice/session-1.scope", placement: "process-group", location: { cgroup: "/outlive/t-0123456789abcdef" },
  killStartedAt: null, killReason: null, killState: null, acknowledgedAt: null, pty: null,
}, null, 2)}\n`;

/** A frame a reader can tell whole from torn: length, checksum, payload. */
function frame(data: string): Buffer {
  const body = Buffer.from(data);
  const sum = createHash("sha256").update(body).digest("hex").slice(0, 16);
  return Buffer.concat([Buffer.from(`${body.length} ${sum}\n`), body]);
}

export interface Variant {
  name: string;
  /** Writes `n` records; resolves once all of them are as durable as this variant makes them. */
  write(n: number): Promise<void>;
  setUp?(): Promise<void>;
  tearDown?(): Promise<void>;
}

/** Every variant, today's write first (the baseline), writing under `root`; `perRound` records a round. */
export function writeVariants(root: string, perRound: number): Variant[] {
  let seq = 0;
  /** A fresh task directory per record written, as each task has its own. */
  function taskDir(): string {
    const dir = join(root, "tasks", `t-${(seq++).toString(16).padStart(16, "0")}`);
    mkdirSync(dir, { recursive: true });
    return dir;
  }

  /** temp + write + (fsync) + rename + (directory fsync). */
  async function tempRename(path: string, data: string, syncFile: boolean, syncDir: boolean): Promise<void> {
    const temp = tempPathFor(path);
    const h = await open(temp, "wx", 0o600);
    await h.writeFile(data);
    if (syncFile) await h.sync();
    await h.close();
    await rename(temp, path);
    if (syncDir) await syncPath(join(path, ".."));
  }

  function journal(name: string, group: number): Variant {
    let h: FileHandle;
    return {
      name,
      setUp: async () => void (h = await open(join(root, `${name.replace(/\W+/g, "-")}.journal`), "a", 0o600)),
      tearDown: () => h.close(),
      async write(n) {
        for (let i = 0; i < n; i++) {
          await h.write(frame(RECORD));
          if ((i + 1) % group === 0 || i === n - 1) await h.datasync();
        }
      },
    };
  }

  /** Files made (with room) when the task is made; each later write overwrites one in place, checksummed. */
  function inPlace(sync: boolean): Variant {
    const files: FileHandle[] = [];
    return {
      name: sync ? "in-place overwrite + checksum, fdatasync" : "in-place overwrite + checksum, no fsync",
      async setUp() {
        for (let i = 0; i < perRound; i++) {
          const h = await open(join(taskDir(), "record.slot"), "w+", 0o600);
          await h.write(Buffer.alloc(4096, " "), 0, 4096, 0);
          await h.sync();
          files.push(h);
        }
      },
      tearDown: async () => void (await Promise.all(files.splice(0).map((h) => h.close()))),
      async write(n) {
        for (let i = 0; i < n; i++) {
          const h = files[i % files.length];
          const f = frame(RECORD);
          await h.write(f, 0, f.length, 0);
          if (sync) await h.datasync();
        }
      },
    };
  }

  /** Replaces a task's record.json, in task directories made beforehand (a live task's write replaces one). */
  function replacing(name: string, write: (path: string) => Promise<void>): Variant {
    const dirs: string[] = [];
    return {
      name,
      setUp: async () => void dirs.push(...Array.from({ length: perRound }, taskDir)),
      async write(n) {
        for (let i = 0; i < n; i++) await write(join(dirs[i % dirs.length], "record.json"));
      },
    };
  }

  /**
   * What replay's writeMany does with a batch: every temp file, one syncfs, every rename, one syncfs
   * (a syncfs flushes the whole file system, other users' dirty data included).
   */
  function batch(): Variant {
    const dirs: string[] = [];
    return {
      name: "batch of a round: temps, syncfs, renames, syncfs",
      setUp: async () => void dirs.push(...Array.from({ length: perRound }, taskDir)),
      write: (n) => writeFilesAtomic(Array.from({ length: n }, (_, i) => ({ path: join(dirs[i % dirs.length], "record.json"), data: RECORD }))),
    };
  }

  /**
   * A whole task's writes through TaskStore as the supervisor makes them (create: the directories, three
   * reserves and \`starting\`; then \`running\`; then the terminal record, which drops the reserves), per write.
   */
  function storeLife(): Variant {
    let store: TaskStore;
    const base = JSON.parse(RECORD) as TaskRecord;
    return {
      name: "TaskStore: create, running, terminal (÷3)",
      setUp: async () => void (store = await TaskStore.open(join(root, "store"))),
      async write(n) {
        for (let i = 0; i < Math.ceil(n / 3); i++) {
          const id = `t-${(seq++).toString(16).padStart(16, "0")}`;
          await store.create({ ...base, id, state: "starting" });
          await store.write({ ...base, id, state: "running" });
          await store.write({ ...base, id, state: "exited", exitCode: 0 });
        }
      },
    };
  }

  return [
    replacing("today: temp, fsync, rename, dir fsync", (path) => writeFileAtomic(path, RECORD)),
    replacing("temp, fsync, rename (no dir fsync)", (path) => tempRename(path, RECORD, true, false)),
    replacing("temp, rename, no fsync", (path) => tempRename(path, RECORD, false, false)),
    batch(),
    storeLife(),
    journal("journal append, fdatasync each", 1),
    journal("group commit, 1 fdatasync per 8", 8),
    journal("group commit, 1 fdatasync per 64", 64),
    inPlace(true),
    inPlace(false),
  ];
}
