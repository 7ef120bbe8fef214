import { describeValue, OutliveError } from "../errors.ts";
import type { PruneResult } from "../retention/retention.ts";
import type { TaskRecord } from "../store/record.ts";
import type { RunSpec } from "../supervisor/options.ts";
import type { ControlRequest } from "./protocol.ts";

/** The supervisor, as the control channel sees it. */
export interface ControlTarget {
  run(spec: RunSpec): Promise<TaskRecord>;
  kill(id: string, options: { graceMs?: number }): Promise<{ record: TaskRecord; how: string }>;
  wait(id: string): Promise<TaskRecord>;
  ack(id: string): Promise<TaskRecord>;
  remove(ids: string[]): Promise<string[]>;
  prune(rule: { olderThanSeconds?: number; keep?: number; unacknowledged?: boolean }): Promise<PruneResult>;
  hello(): { pid: number; incarnation: string };
}

/** Carries a checked request out on the target; the target checks the values it is given. */
export function dispatch(target: ControlTarget, { op, args }: ControlRequest): Promise<unknown> {
  const id = () => {
    if (typeof args.id !== "string") throw bad("id", "a task id string", args.id);
    return args.id;
  };
  switch (op) {
    case "run":
      return target.run(args as RunSpec);
    case "kill": {
      const graceMs = args.graceMs;
      if (graceMs !== undefined && (!Number.isSafeInteger(graceMs) || (graceMs as number) < 0)) throw bad("graceMs", "an integer >= 0", graceMs);
      return target.kill(id(), { graceMs: graceMs as number | undefined });
    }
    case "wait":
      return target.wait(id());
    case "ack":
      return target.ack(id());
    case "remove": {
      const ids = args.ids;
      if (!Array.isArray(ids) || !ids.every((i) => typeof i === "string")) throw bad("ids", "an array of strings", ids);
      return target.remove(ids);
    }
    case "prune":
      return target.prune(args);
    case "hello":
      return Promise.resolve(target.hello());
  }
}

function bad(name: string, expected: string, value: unknown): OutliveError {
  return new OutliveError("E_BAD_OPTION", `Expected the control request's \`${name}\` to be ${expected}, got ${describeValue(value)}`);
}
