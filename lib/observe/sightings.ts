/** What was seen of one task, with the moments (epoch ms) it was seen. */
export interface Sighting {
  /** The last moment it was seen alive. */
  aliveAt?: number;
  /** The first moment it was seen gone (its wrapper or its group). */
  goneAt?: number;
  /** The moment a live watch saw its cgroup empty (`cgroup.events` said `populated 0`). */
  emptiedAt?: number;
}

/**
 * The moments this process saw its tasks alive and gone, so an end without a
 * marker of its own time is dated by what was seen ("ended between A and B"),
 * not by when it was decided. Kept in memory only: a supervisor that was
 * not running saw nothing, and says so by the bounds it has.
 *
 * @example
 * ```ts
 * import { Sightings } from "./sightings.ts";
 * const seen = new Sightings();
 * seen.alive("t-1", 1000);
 * seen.alive("t-1", 2000);
 * seen.gone("t-1", 2500);
 * seen.gone("t-1", 3000);
 * console.log(seen.of("t-1")); // { aliveAt: 2000, goneAt: 2500 }
 * ```
 */
export class Sightings {
  private readonly seen = new Map<string, Sighting>();

  /** Seen alive at `at`: the latest such moment is kept (until it is seen gone). */
  alive(id: string, at: number): void {
    const s = this.entry(id);
    if (s.goneAt === undefined && (s.aliveAt === undefined || at > s.aliveAt)) s.aliveAt = at;
  }

  /** Seen gone at `at`: the first such moment is kept. */
  gone(id: string, at: number): void {
    const s = this.entry(id);
    if (s.goneAt === undefined || at < s.goneAt) s.goneAt = at;
  }

  /** Its cgroup was seen empty at `at`: the first such moment is kept. */
  emptied(id: string, at: number): void {
    const s = this.entry(id);
    if (s.emptiedAt === undefined || at < s.emptiedAt) s.emptiedAt = at;
  }

  of(id: string): Sighting {
    return { ...this.seen.get(id) };
  }

  /** The task's end is recorded: nothing more to keep. */
  forget(id: string): void {
    this.seen.delete(id);
  }

  private entry(id: string): Sighting {
    let s = this.seen.get(id);
    if (!s) this.seen.set(id, (s = {}));
    return s;
  }
}
