import { GenerationTable } from "./table.ts";
import type { ExitEvent, RetiredEvent } from "./events.ts";
import type { KillSignal, ProcessHandle, ProcessSink } from "./handle.ts";
import type { TaskRecord } from "../store/record/record.ts";

/**
 * A task started under a key, as the generation table sees it: the handle
 * exists at once (the table needs one synchronously), the task id and pid
 * follow when the spawn completes. A supersede that arrives before then is
 * held and carried out as soon as the task runs.
 */
class TaskHandle implements ProcessHandle {
  taskId: string | null = null;
  pid: number | null = null;
  supersededBy: number | null = null;
  sink!: ProcessSink;
  constructor(private readonly onSupersede: (taskId: string, by: number) => void, private readonly currentOf: () => number | null) {}

  kill(_signal: KillSignal): boolean {
    // Called by the table after it moved the key to the successor: the key's current generation is the successor.
    this.supersededBy = this.currentOf();
    if (this.taskId) this.onSupersede(this.taskId, this.supersededBy ?? 0);
    return true;
  }

  /** The spawn completed; a supersede asked for meanwhile is carried out now. */
  bind(record: TaskRecord): void {
    this.taskId = record.id;
    this.pid = record.pid;
    if (this.supersededBy !== null) this.onSupersede(record.id, this.supersededBy);
  }
}

interface KeyedSpec {
  handle?: TaskHandle;
}

export interface KeyedTaskHooks {
  /** End a superseded task: the ladder, with reason "superseded by generation N". */
  supersede(taskId: string, by: number): void;
}

/**
 * The supervisor's one-task-per-key table. Identity is (key, generation),
 * from a counter that only grows across restarts (it resumes after the
 * largest generation stored). Running under a key with a live task bumps
 * the generation first and only then ends the predecessor.
 */
export class KeyedTasks {
  private readonly table: GenerationTable<KeyedSpec>;
  private readonly handles = new Map<string, TaskHandle>();

  constructor(private readonly hooks: KeyedTaskHooks) {
    this.table = new GenerationTable<KeyedSpec>(
      {
        start: (spec, sink) => {
          const handle = spec.handle!;
          handle.sink = sink;
          return handle;
        },
      },
    );
  }

  /** Takes the key for a new generation (synchronously, before any await). */
  begin(key: string): { generation: number; handle: TaskHandle } {
    let generation = 0;
    const handle = new TaskHandle((id, by) => this.hooks.supersede(id, by), () => this.table.current(key)?.generation ?? generation);
    generation = this.table.spawn(key, { handle }).generation;
    return { generation, handle };
  }

  /** The spawn completed: from now on the task's end settles its generation. */
  started(handle: TaskHandle, record: TaskRecord): void {
    this.handles.set(record.id, handle);
    handle.bind(record);
  }

  /** The spawn failed: the generation ends with the error. */
  failed(handle: TaskHandle, error: Error): void {
    handle.sink.error(error);
  }

  /** After replay's adoptions: no generation a stored record used is issued again. */
  reserveThrough(generation: number): void {
    this.table.reserveThrough(generation);
  }

  /** A keyed task found alive after a restart takes its key again (ascending generation order). */
  adopt(record: TaskRecord): void {
    if (record.key === null || record.generation === null) return;
    const handle = new TaskHandle((id, by) => this.hooks.supersede(id, by), () => this.table.current(record.key!)?.generation ?? null);
    const result = this.table.adopt(record.key, record.generation, handle);
    if (!result.ok) return;
    handle.sink = result.sink;
    this.handles.set(record.id, handle);
    handle.bind(record);
  }

  /** A task ended: its generation settles exactly once. */
  ended(record: TaskRecord): void {
    const handle = this.handles.get(record.id);
    if (!handle) return;
    this.handles.delete(record.id);
    handle.sink.close(record.exitCode, null);
  }

  isCurrent(key: string, generation: number): boolean {
    return this.table.isCurrent(key, generation);
  }

  /** The generation that owns the key now, or null. */
  current(key: string): number | null {
    return this.table.current(key)?.generation ?? null;
  }

  onExit(listener: (e: ExitEvent) => void): () => void {
    return this.table.on("exit", listener);
  }

  onRetired(listener: (e: RetiredEvent) => void): () => void {
    return this.table.on("retired", listener);
  }
}
