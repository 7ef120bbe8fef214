import type { KillRequest, KillResult } from "../kill/task-kills.ts";
import type { OutputChunk, OutputOptions } from "../output/request.ts";
import type { Placement } from "../placement/placement.ts";
import type { PtySize } from "../pty/size.ts";
import type { ReplayReport } from "../replay/replay-at-open.ts";
import type { PruneResult } from "../retention/retention.ts";
import type { RunSpec } from "../start/run-spec.ts";
import type { TaskRecord } from "../store/record/record.ts";
import type { ListeningPort } from "../ports/proc-net.ts";
import type { TaskStore } from "../store/task-store.ts";

/**
 * What the control channel asks of the supervisor it serves: the wire's
 * methods, one call each. The Supervisor fills it; it is declared here so
 * the channel imports nothing of lib/supervisor, which starts the channel
 * (a type that pointed up would be a layer that points up, and the next
 * value import along it an import cycle at load time).
 */
export interface ControlTarget {
  readonly store: TaskStore;
  readonly placement: Placement;
  readonly placementReason: string;
  readonly replayReport: ReplayReport;
  run(spec: RunSpec): Promise<TaskRecord>;
  waitReady(id: string): Promise<TaskRecord>;
  subscribeReady(listener: (record: TaskRecord) => void): () => void;
  ports(records: readonly TaskRecord[]): Map<string, ListeningPort[]>;
  get(id: string): TaskRecord;
  list(): TaskRecord[];
  wait(id: string): Promise<TaskRecord>;
  kill(id: string, options?: KillRequest): Promise<KillResult>;
  ack(id: string): Promise<TaskRecord>;
  remove(ids: string | string[]): Promise<string[]>;
  prune(rule?: { olderThanSeconds?: number; keep?: number; unacknowledged?: boolean }): Promise<PruneResult>;
  write(id: string, data: string | Uint8Array): Promise<void>;
  resize(id: string, cols: number, rows: number): Promise<PtySize>;
  output(id: string, options?: OutputOptions): AsyncIterable<OutputChunk>;
  /** Every unacknowledged completion once for this subscriber, until `close`. */
  subscribeCompletions(): AsyncIterable<TaskRecord> & { close(): void };
}
