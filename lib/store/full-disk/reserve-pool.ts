import { mkdirSync, readdirSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { storagePaths } from "../layout.ts";
import { reserveSpace } from "./record-reserve.ts";

/** What a reserve is for: a task's end (its terminal record), or a live write (`running`, `killing`). */
export type ReserveKind = "terminal" | "live";

/** Live writes a task may need on a full disk (`running`, then `killing`): reserves of that kind per live task. */
export const LIVE_RESERVES_PER_TASK = 2;

interface Reserve {
  path: string;
  bytes: number;
}

/**
 * The space a storage keeps aside so that records can still be written once
 * the disk is full: files holding real blocks (spaces, not holes) in
 * `<root>/reserves/`, named `KIND-BYTES-RANDOM`. A record written on a full
 * disk goes into one (overwritten in place, renamed over the record; see
 * writeIntoReserve), which uses the reserve up.
 *
 * The pool is shared by the storage's live tasks rather than made per task:
 * it holds at least one `terminal` and LIVE_RESERVES_PER_TASK `live`
 * reserves for every live task, and a task that ends without needing its
 * share leaves it for the next run. So in steady state a run makes no
 * reserve file and an end deletes none (on ext4 each create or unlink is
 * 100–150 µs a file, a tenth of a spawn). The terminal reserves are a kind
 * apart, so live writes never use up the space an end needs.
 *
 * @example
 * ```ts
 * import { mkdtempSync, readdirSync, rmSync } from "node:fs";
 * import { tmpdir } from "node:os";
 * import { join } from "node:path";
 * import { ReservePool } from "./reserve-pool.ts";
 * const root = mkdtempSync(join(tmpdir(), "outlive-pool-"));
 * const pool = ReservePool.open(root);
 * pool.ensure(1, { terminal: 8192, live: 4096 });
 * console.log(readdirSync(join(root, "reserves")).length); // 3: one terminal, two live
 * console.log(pool.take("terminal", 1000) !== null, pool.size("terminal")); // true 0
 * rmSync(root, { recursive: true });
 * ```
 */
export class ReservePool {
  private readonly kinds: Record<ReserveKind, Reserve[]> = { terminal: [], live: [] };

  private constructor(readonly dir: string) {}

  /** Makes `<root>/reserves/` if missing and takes stock of what an earlier supervisor left in it. */
  static open(root: string): ReservePool {
    const pool = new ReservePool(storagePaths(root).reserves);
    mkdirSync(pool.dir, { recursive: true, mode: 0o700 });
    for (const name of readdirSync(pool.dir)) {
      const m = /^(terminal|live)-(\d+)-[0-9a-f]+$/.exec(name);
      // A reserve cut short by a crash while it was made is found short when used (its size is checked then).
      if (m) pool.kinds[m[1] as ReserveKind].push({ path: join(pool.dir, name), bytes: Number(m[2]) });
    }
    for (const list of Object.values(pool.kinds)) list.sort((a, b) => a.bytes - b.bytes);
    return pool;
  }

  /** Reserves of `kind` in the pool now. */
  size(kind: ReserveKind): number {
    return this.kinds[kind].length;
  }

  /**
   * Makes reserves until there are enough for `liveTasks` live tasks, and
   * at least one terminal and LIVE_RESERVES_PER_TASK live reserves of the
   * sizes the next task needs. Throws (ENOSPC, say) when the disk has no
   * room for them: a task is not started without its reserves.
   */
  ensure(liveTasks: number, bytes: Record<ReserveKind, number>): void {
    const want: Record<ReserveKind, number> = { terminal: liveTasks, live: liveTasks * LIVE_RESERVES_PER_TASK };
    const fitting: Record<ReserveKind, number> = { terminal: 1, live: LIVE_RESERVES_PER_TASK };
    for (const kind of ["terminal", "live"] as const) {
      const list = this.kinds[kind];
      let bigEnough = list.filter((r) => r.bytes >= bytes[kind]).length;
      while (list.length < want[kind] || bigEnough < fitting[kind]) {
        this.make(kind, bytes[kind]);
        bigEnough++;
      }
    }
  }

  /** Takes the smallest reserve of `kind` that holds `bytes` out of the pool: its path, or null when there is none. */
  take(kind: ReserveKind, bytes: number): string | null {
    const list = this.kinds[kind];
    const i = list.findIndex((r) => r.bytes >= bytes);
    if (i < 0) return null;
    return list.splice(i, 1)[0].path;
  }

  private make(kind: ReserveKind, bytes: number): void {
    const path = join(this.dir, `${kind}-${bytes}-${randomBytes(6).toString("hex")}`);
    reserveSpace(path, bytes);
    const list = this.kinds[kind];
    const at = list.findIndex((r) => r.bytes > bytes);
    list.splice(at < 0 ? list.length : at, 0, { path, bytes });
  }
}

/** What a terminal reserve holds beyond the first record's size when the caller does not say: the output tail, the reason. */
const DEFAULT_TERMINAL_EXTRA_BYTES = 32_768;

/** What a live write's reserve holds beyond the first record's size: a kill reason, a found location. */
const LIVE_RESERVE_EXTRA_BYTES = 4096;

/**
 * The reserve sizes a task needs, whose first record is `firstRecordBytes`
 * long and whose end may need `terminalExtraBytes` more (32 KiB when not
 * said), rounded up to whole 4 KiB blocks (so most tasks need the same
 * sizes, and any one's reserve fits the next).
 *
 * @example
 * ```ts
 * import { reserveSizes } from "./reserve-pool.ts";
 * console.log(reserveSizes(900)); // { terminal: 36864, live: 8192 }
 * ```
 */
export function reserveSizes(firstRecordBytes: number, terminalExtraBytes?: number): Record<ReserveKind, number> {
  const blocks = (n: number) => Math.ceil(n / 4096) * 4096;
  return {
    terminal: blocks(firstRecordBytes + (terminalExtraBytes ?? DEFAULT_TERMINAL_EXTRA_BYTES)),
    live: blocks(firstRecordBytes + LIVE_RESERVE_EXTRA_BYTES),
  };
}
