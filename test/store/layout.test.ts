import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { taskPaths } from "../../lib/store/layout.ts";

describe("taskPaths", () => {
  it("gives what join() gives name by name, for any root and id (it joins once and appends)", () => {
    const byJoin = (root: string, id: string) => {
      const dir = join(root, "tasks", id);
      const io = join(dir, "io");
      return { dir, record: join(dir, "record.json"), io, stdout: join(io, "stdout"), stderr: join(io, "stderr"), exit: join(io, "exit"), timedOut: join(io, "timed-out"), ended: join(io, "ended"), commandPid: join(io, "command-pid"), hostStopping: join(io, "host-stopping"), hostUnanswered: join(io, "host-unanswered"), killAsked: join(io, "kill-asked"),
        attempts: join(io, "attempts"), pidsEvents: join(io, "pids.events"), cpuStat: join(io, "cpu.stat"), shimRefused: join(io, "shim-refused") };
    };
    const parts = ["", ".", "..", "/", "//", "./", "../", "a", "a/", "/a", "a//b", ".a", "x/..", "../..", "t-1"];
    const differ: string[] = [];
    for (const r1 of parts) for (const r2 of parts) for (const i1 of parts) for (const i2 of parts) {
      const [root, id] = [r1 + r2, i1 + i2];
      if (JSON.stringify(taskPaths(root, id)) !== JSON.stringify(byJoin(root, id))) differ.push(JSON.stringify([root, id]));
    }
    expect(differ).toEqual([]);
  });
});
