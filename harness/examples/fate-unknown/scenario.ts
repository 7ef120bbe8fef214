/**
 * Field report 1: a module restart kills background tasks, and the tool says
 * "fate unknown". The same steps against a naive supervisor (the bug shows:
 * "reproduced") and against outlive's module (it does not: "pass").
 *
 *   npx outlive scenario run harness/examples/fate-unknown/scenario.ts
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { defineScenario, type ScenarioContext } from "outlive/harness";

/** A build that takes a few seconds, so a restart lands in the middle of it. */
const BUILD = "echo build-started; sleep 3; echo build-done";

/** What the steps need from a tool; each variant drives its own tool through its own interface. */
interface Tool {
  start(): Promise<void>;
  run(id: string, shell: string): Promise<void>;
  output(id: string): string;
  restart(): Promise<void>;
  /** What the tool says became of the task, once it says anything (bounded). */
  result(id: string): Promise<{ exitCode: number | null; text: string }>;
}

async function steps(ctx: ScenarioContext, tool: Tool): Promise<void> {
  await tool.start();
  await tool.run("build", BUILD);
  await ctx.waitFor("the build to start", () => tool.output("build").includes("build-started"));
  await tool.restart();
  const result = await tool.result("build");
  ctx.check("the tool knows what became of the task (never \"fate unknown\")", !/fate unknown/.test(result.text), result);
  ctx.check("the task survived the restart and exited 0 with its whole output", result.exitCode === 0 && tool.output("build").includes("build-done"), { result, output: tool.output("build") });
}

function naive(ctx: ScenarioContext): Tool {
  const state = join(ctx.runDir, "naive-state");
  const d = ctx.daemon({
    module: {
      argv: ["node", fileURLToPath(new URL("./naive-supervisor.mjs", import.meta.url)), state],
      ready: { stdout: /^ready$/ },
      drain: { stdin: "drain {reason}", waitMs: 5000 },
    },
  });
  return {
    start: async () => void (await d.start()),
    run: async (id, shell) => {
      d.foreign.send(`run ${id} ${shell}`);
      await d.foreign.waitForLine(`started ${id} `);
    },
    output: (id) => {
      try {
        return readFileSync(join(state, `${id}.out`), "utf8");
      } catch {
        return "";
      }
    },
    restart: async () => void (await d.restart("restart")),
    result: async (id) => {
      const line = await d.foreign.waitForLine(`task ${id}: `);
      const code = /exited (\d+)/.exec(line);
      return { exitCode: code ? Number(code[1]) : null, text: line };
    },
  };
}

function outlive(ctx: ScenarioContext): Tool {
  const d = ctx.daemon();
  return {
    start: async () => void (await d.start()),
    run: async (id, shell) => void (await d.run({ id, shell })),
    output: (id) => ctx.output(id),
    restart: async () => void (await d.restart("restart")),
    result: async (id) => {
      const done = await ctx.completion(d, id, 15_000);
      return { exitCode: done.exitCode ?? null, text: `${done.state}: ${done.reason ?? ""}` };
    },
  };
}

export default [
  defineScenario({
    name: "fate-unknown-naive",
    summary: "a naive supervisor's tasks die with its cgroup on a restart, and it reports them \"fate unknown\"",
    bug: "field report 1: background tasks share the module's cgroup; replay by pid alone says \"fate unknown\"",
    inside: (ctx) => steps(ctx, naive(ctx)),
  }),
  defineScenario({
    name: "fate-unknown-outlive",
    summary: "the same steps against outlive's module: the task survives the restart and its real exit code is reported",
    inside: (ctx) => steps(ctx, outlive(ctx)),
  }),
];
