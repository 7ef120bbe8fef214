/**
 * Field report 3: a killed process's late exit is taken for its
 * successor's. A naive table keyed by session id reports the running
 * successor "exited 143" and forgets it ("reproduced"); outlive's module,
 * with generations under the key, does not ("pass").
 *
 *   npx outlive scenario run harness/examples/late-exit/scenario.ts
 */
import { fileURLToPath } from "node:url";
import { defineScenario, type ScenarioContext } from "outlive/harness";

/** Traps TERM, keeps writing for ~600 ms, then exits 143: the field's draining predecessor. */
const PREDECESSOR = "trap 'for i in 1 2 3 4 5 6; do echo pred-late; sleep 0.1; done; exit 143' TERM; echo pred-up; while :; do sleep 0.1; done";
const SUCCESSOR = "echo succ-up; sleep 4; echo succ-done";

interface Tool {
  start(): Promise<void>;
  /** Spawns under `key`, replacing (killing) whatever holds it. */
  spawn(key: string, id: string, shell: string): Promise<void>;
  /** Waits until `id` has printed `text`. */
  printed(id: string, text: string): Promise<void>;
  /** Waits for the predecessor's end as the tool reports it. */
  predecessorEnded(): Promise<void>;
  /** What the tool now says of the key's current process, and every exit it has reported for the successor. */
  successor(): Promise<{ tracked: boolean; exitsReported: string[]; output: string }>;
  /** Ends the tool and what it still runs. */
  stop(): Promise<void>;
}

async function steps(ctx: ScenarioContext, tool: Tool): Promise<void> {
  await tool.start();
  await tool.spawn("session-1", "pred", PREDECESSOR);
  await tool.printed("pred", "pred-up");
  ctx.mark("respawn", "successor spawned under session-1");
  await tool.spawn("session-1", "succ", SUCCESSOR);
  await tool.printed("succ", "succ-up");
  await tool.predecessorEnded();
  await ctx.sleep(300);
  const s = await tool.successor();
  ctx.check("no exit is reported for the running successor", s.exitsReported.length === 0, s);
  ctx.check("the tool still tracks the running successor", s.tracked, s);
  ctx.check("the successor's output holds none of the predecessor's", !s.output.includes("pred-late"), s.output);
  await tool.stop();
}

function naive(ctx: ScenarioContext): Tool {
  const d = ctx.daemon({
    module: { argv: ["node", fileURLToPath(new URL("./naive-table.mjs", import.meta.url))], ready: { stdout: /^ready$/ } },
  });
  const lines = () => d.foreign.lines;
  let succSpawnedAt = 0;
  return {
    start: async () => void (await d.start()),
    spawn: async (key, id, shell) => {
      if (id === "succ") succSpawnedAt = lines().length;
      d.foreign.send(`spawn ${key} ${shell}`);
      await d.foreign.waitForLine(new RegExp(`^spawned ${key} `));
    },
    // The table tags output by key only; which process printed it is what it cannot tell.
    printed: async (_id, text) => void (await d.foreign.waitForLine(`out session-1 ${text}`)),
    predecessorEnded: async () => void (await d.foreign.waitForLine(/^session-1 exited/, 10_000)),
    successor: async () => {
      d.foreign.send("status session-1");
      const status = await d.foreign.waitForLine(/^status session-1 /);
      const after = lines().slice(succSpawnedAt);
      return {
        tracked: status.includes("running"),
        // Every exit the table reported under the key after the successor took it, it reported as the key's, the successor's.
        exitsReported: after.filter((l) => /^session-1 exited/.test(l)),
        output: after.filter((l) => l.startsWith("out session-1 ")).join("\n"),
      };
    },
    stop: () => d.killModule("the daemon ends the table and everything in its cgroup"),
  };
}

function outlive(ctx: ScenarioContext): Tool {
  const d = ctx.daemon({ graceMs: 3000 });
  return {
    start: async () => void (await d.start()),
    spawn: async (key, id, shell) => void (await d.run({ id, key, argv: ["bash", "-c", shell] })),
    printed: async (id, text) => void (await ctx.waitFor(`${id} to print ${text}`, () => ctx.output(id).includes(text))),
    predecessorEnded: async () => void (await ctx.completion(d, "pred", 10_000)),
    successor: async () => {
      const now = (await d.request("get", { id: "succ" })).task;
      return {
        tracked: now.state === "running",
        exitsReported: d.deliveries().filter((t) => t.id === "succ").map((t) => `${t.state} ${t.exitCode}`),
        output: ctx.output("succ"),
      };
    },
    stop: () => d.stop("disable"),
  };
}

export default [
  defineScenario({
    name: "late-exit-naive",
    summary: "a naive table keyed by session id takes a killed predecessor's late exit for its successor's",
    bug: "field report 3: exit handlers look the key up, so the predecessor's exit lands on the successor",
    inside: (ctx) => steps(ctx, naive(ctx)),
  }),
  defineScenario({
    name: "late-exit-outlive",
    summary: "the same steps against outlive's module: the successor keeps running and tracked, with its own output",
    inside: (ctx) => steps(ctx, outlive(ctx)),
  }),
];
