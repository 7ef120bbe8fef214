// Deno reads the SDK's types from these paths: its package maps `./*` to `*.d.ts`, which for a
// `.js` subpath names `mcp.js.d.ts`; tsc finds `mcp.d.ts` anyway, Deno's check does not. Types only.
// @ts-types="../../node_modules/@modelcontextprotocol/sdk/dist/esm/types.d.ts"
import type { CallToolResult, ToolAnnotations } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { OutliveError } from "../errors.ts";
import { ALL_STATES, type TaskRecord } from "../store/record/record.ts";
import { inputAnswer, killAnswer, listAnswer, notReadyAnswer, outputAnswer, runAnswer, taskAnswer, waitAnswer } from "./answers.ts";
import { chunkText } from "./output-text.ts";

/** `run`'s answer: a record, with `ensured` when the call asked to ensure. */
type RunAnswer = TaskRecord & { ensured?: { outcome: string; replaced: string | null; differs: string[] } };

/** One call of the wire protocol (lib/session/session.ts's `Session.call`): what every tool is built on. */
export type RpcCall = (method: string, params?: unknown) => Promise<unknown>;

/** The bounds and defaults the tools apply; each is a flag of `outlive mcp` (scripts/commands/mcp.ts). */
export interface ToolLimits {
  /** wait_task's timeoutSeconds when the call gives none. */
  waitDefaultSeconds: number;
  /** The most wait_task waits in one call: below the client's own request timeout (Codex's default is 60 s). */
  waitMaxSeconds: number;
  /** task_output's maxBytes when the call gives none. */
  outputDefaultBytes: number;
  /** run_task's cwd when the call gives none: where the agent started `outlive mcp` (a holder elsewhere would use its own). */
  cwd: string;
}

/** The defaults of ToolLimits but `cwd`, as `outlive mcp --help` documents them. */
export const DEFAULT_TOOL_LIMITS = { waitDefaultSeconds: 30, waitMaxSeconds: 50, outputDefaultBytes: 16_384 } as const;

/** list_tasks answers the newest this many when the call gives no limit, and at most LIST_MAX: an answer is read by a model. */
const LIST_DEFAULT = 50;
const LIST_MAX = 1000;

/** The protocol's own ceiling for one `output` call. */
const OUTPUT_MAX_BYTES = 1 << 20;

/** A tool as the server registers it: its name, what a model reads about it, its input schema, and what it does. */
export interface ToolDefinition {
  name: string;
  title: string;
  description: string;
  inputSchema: z.ZodRawShape;
  annotations: ToolAnnotations;
  /** `"optional"`: a client may also call it as an MCP task (server.ts registers it with the SDK's registerToolTask). */
  taskSupport?: "optional";
  answer(call: RpcCall, args: Record<string, unknown>, limits: ToolLimits): Promise<CallToolResult>;
}

/**
 * run_task's arguments as the wire's run spec: a task starts where the
 * agent started `outlive mcp` unless the call names a cwd (a holder
 * elsewhere would otherwise use its own).
 *
 * @example
 * ```ts
 * import { runSpecOf } from "./tools.ts";
 * console.log(runSpecOf({ argv: ["make"] }, { waitDefaultSeconds: 30, waitMaxSeconds: 50, outputDefaultBytes: 16384, cwd: "/src" }));
 * // { argv: ["make"], cwd: "/src" }
 * ```
 */
export function runSpecOf(args: Record<string, unknown>, limits: ToolLimits): Record<string, unknown> {
  // waitReady is the tool's, not the wire's run: run_task asks for readiness apart (bounded like wait_task), and an
  // MCP task answers at once and is polled.
  const { waitReady: _waitReady, ...spec } = args;
  return { ...spec, cwd: spec.cwd ?? limits.cwd };
}

const id = z.string().min(1).describe("The task's id, as run_task or list_tasks gave it.");
const listStates = ["live", "finished", ...ALL_STATES] as [string, ...string[]];

/**
 * The tools of `outlive mcp`, each one call (or a few) of the wire
 * protocol. Inputs are checked twice: by these schemas (types, so a model
 * sees them), and by the supervisor behind the session (values, with a
 * message naming the param).
 */
export const TOOLS: readonly ToolDefinition[] = [
  {
    name: "run_task",
    title: "Run a background task",
    description: [
      "Start a command as a durable background task and return its id at once.",
      "The task keeps running when this MCP server, or the agent's harness, restarts; a later server finds it again by its id.",
      "Give exactly one of argv (no shell) or shell (run by /bin/sh -c).",
      "For a dev server: say when it is ready (readyLog, readyPort or readyHttp) and pass waitReady to get the answer once it is, with the ports it listens on;",
      "give it a key and ensure, so that running it again returns the same server instead of a second one.",
      "Follow it with get_task, wait_task and task_output; call ack_task once you have used its result.",
    ].join(" "),
    inputSchema: {
      argv: z.array(z.string()).min(1).optional().describe('The program and its arguments, e.g. ["npm", "test"].'),
      shell: z.string().min(1).optional().describe('A shell command line, e.g. "make -j4 2>&1 | tail -50".'),
      id: z.string().optional().describe("An id of your choosing (lowercase letters, digits and -, at most 63); default: a fresh one."),
      cwd: z.string().optional().describe("Absolute working directory; default: the directory outlive mcp was started in."),
      env: z.record(z.string(), z.string()).optional().describe("Variables set on top of the server's environment."),
      key: z.string().optional().describe("A key: starting a task with the key of a live one supersedes (kills) the older, unless ensure."),
      ensure: z.boolean().optional().describe("With key: if a live task under the key was started with the same spec, return it (kept) instead of starting another."),
      envFile: z.string().optional().describe("Absolute path of a .env file whose variables the task gets (env wins); values are never stored."),
      readyLog: z.string().optional().describe('Ready once a line of output matches this regular expression, e.g. "ready in|Local:".'),
      readyPort: z.number().int().min(1).max(65535).optional().describe("Ready once the task's own processes listen on this TCP port."),
      readyHttp: z.string().optional().describe("Ready once this http(s) URL answers 2xx or 3xx."),
      readyTimeoutSeconds: z.number().positive().optional().describe("How long readiness may take from the start (default 60); the task runs on after it."),
      waitReady: z.boolean().optional().describe("Answer once the task is ready (bounded by this server's --wait-max; then call wait_task with until ready)."),
      restart: z.enum(["on-failure", "always"]).optional().describe("Start the command again when it fails (on-failure) or ends (always)."),
      restartMax: z.number().int().positive().optional().describe("At most this many restarts (default 5)."),
      restartDelaySeconds: z.number().positive().optional().describe("First delay before a restart, doubling each time (default 1)."),
      restartDelayMaxSeconds: z.number().positive().optional().describe("Longest delay between restarts (default 30)."),
      cpuCores: z.number().positive().optional().describe("CPU limit in cores, e.g. 0.5, where the placement enforces one."),
      pidsMax: z.number().int().positive().optional().describe("Most processes and threads at once, where the placement enforces it."),
      timeoutSeconds: z.number().positive().optional().describe("Kill the task after this many seconds."),
      memoryMaxBytes: z.number().int().positive().optional().describe("Memory cap in bytes, where the placement enforces one."),
      maxOutputBytes: z.number().int().nonnegative().optional().describe("Bytes of output kept per stream (0: all)."),
      pty: z.object({ cols: z.number().int().positive(), rows: z.number().int().positive() }).optional().describe("Run in a terminal of this size (then send_input types into it)."),
    },
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    taskSupport: "optional",
    async answer(call, args, limits) {
      const record = (await call("run", runSpecOf(args, limits))) as RunAnswer;
      if (!args.waitReady) return runAnswer(record, null);
      // Bounded like wait_task: the readiness wait is asked apart, so a long one ends in an answer, not a client's timeout.
      const seconds = Math.min(limits.waitMaxSeconds, (args.readyTimeoutSeconds as number | undefined) ?? limits.waitMaxSeconds);
      try {
        const ready = (await call("wait", { id: record.id, until: "ready", timeoutMs: Math.round(seconds * 1000) })) as TaskRecord;
        return runAnswer({ ...ready, ensured: record.ensured }, seconds);
      } catch (error) {
        if ((error as OutliveError).code !== "E_NOT_READY") throw error;
        return notReadyAnswer(record.id, error as Error & { task?: TaskRecord });
      }
    },
  },
  {
    name: "list_tasks",
    title: "List background tasks",
    description: "List the storage's tasks, oldest first, each with its state and honest reason. Filter by state (\"live\" for the running ones, \"finished\" for the ended ones) or by key.",
    inputSchema: {
      state: z.enum(listStates).optional().describe("Only tasks in this state; live and finished group them."),
      key: z.string().optional().describe("Only tasks with this key."),
      limit: z.number().int().positive().max(LIST_MAX).optional().describe(`At most this many, the newest (default ${LIST_DEFAULT}).`),
    },
    annotations: { readOnlyHint: true, openWorldHint: false },
    async answer(call, args) {
      const records = (await call("list", { state: args.state, key: args.key })) as TaskRecord[];
      const filter = [args.state === undefined ? "" : ` in state ${args.state}`, args.key === undefined ? "" : ` with key ${JSON.stringify(args.key)}`].join("");
      return listAnswer(records, filter, (args.limit as number | undefined) ?? LIST_DEFAULT);
    },
  },
  {
    name: "get_task",
    title: "Get a task",
    description: "A task's state now, why it is in that state (its record's reason), its exit code once it ended, and its last output.",
    inputSchema: { id },
    annotations: { readOnlyHint: true, openWorldHint: false },
    async answer(call, args) {
      return taskAnswer((await call("get", { id: args.id })) as TaskRecord);
    },
  },
  {
    name: "task_output",
    title: "Read a task's output",
    description: "A chunk of a task's stdout or stderr as text, from a byte offset. The answer says where the next chunk starts (pass it as from) and whether the task has ended.",
    inputSchema: {
      id,
      stream: z.enum(["stdout", "stderr"]).optional().describe("Which stream (default stdout; a PTY task's terminal is its stdout)."),
      from: z.number().int().nonnegative().optional().describe("Byte offset to read from (default 0); the next call passes the last answer's next."),
      maxBytes: z.number().int().positive().max(OUTPUT_MAX_BYTES).optional().describe("Most bytes to read (default set by the server, 16384 unless --output-bytes says otherwise)."),
    },
    annotations: { readOnlyHint: true, openWorldHint: false },
    async answer(call, args, limits) {
      const stream = (args.stream as string | undefined) ?? "stdout";
      const chunk = (await call("output", { id: args.id, stream, from: args.from ?? 0, maxBytes: args.maxBytes ?? limits.outputDefaultBytes })) as {
        id: string; stream: string; offset: number; missed: number; data: string; next: number; size: number; done: boolean;
      };
      const bytes = Buffer.from(chunk.data, "base64");
      const { text, next } = chunkText(bytes, chunk.offset, chunk.done);
      return outputAnswer({ id: chunk.id, stream: chunk.stream, offset: chunk.offset, missed: chunk.missed, next, size: chunk.size, done: chunk.done && next === chunk.size, text });
    },
  },
  {
    name: "wait_task",
    title: "Wait for a task to end",
    description: "Wait until a task has ended, for at most timeoutSeconds, and return it: its end state, exit code and reason, or its state now if the time ran out (then call again).",
    inputSchema: {
      id,
      timeoutSeconds: z.number().positive().optional().describe("Most seconds to wait (default and ceiling set by the server: 30 and 50 unless --wait-default and --wait-max say otherwise)."),
      until: z.enum(["end", "ready"]).optional().describe("end (default): until the task ends; ready: until its readiness condition holds (an error says it ended or timed out first)."),
    },
    annotations: { readOnlyHint: true, openWorldHint: false },
    async answer(call, args, limits) {
      const seconds = (args.timeoutSeconds as number | undefined) ?? limits.waitDefaultSeconds;
      if (seconds > limits.waitMaxSeconds) {
        throw new OutliveError("E_BAD_OPTION", `timeoutSeconds is ${seconds}; expected at most ${limits.waitMaxSeconds} (this server's --wait-max): wait in several calls`);
      }
      const until = (args.until as "end" | "ready" | undefined) ?? "end";
      const record = (await call("wait", { id: args.id, timeoutMs: Math.round(seconds * 1000), until })) as TaskRecord;
      return waitAnswer(record, seconds, until);
    },
  },
  {
    name: "kill_task",
    title: "Kill a task",
    description: "End a task: SIGTERM, a grace period, then SIGKILL and the whole cgroup. Returns how it was ended and the task's record.",
    inputSchema: {
      id,
      graceMs: z.number().int().nonnegative().optional().describe("Milliseconds between SIGTERM and SIGKILL (default: the supervisor's)."),
    },
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    async answer(call, args) {
      const killed = (await call("kill", args)) as { record: TaskRecord; how: string };
      return killAnswer(killed.record, killed.how);
    },
  },
  {
    name: "send_input",
    title: "Type into a task's terminal",
    description: "Type text into a PTY task's terminal (one started with pty), as at its keyboard. No newline is added: end with \\n or \\r to press Enter; \\u0003 is Ctrl-C.",
    inputSchema: { id, text: z.string().min(1).describe("The text to type.") },
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    async answer(call, args) {
      const written = (await call("write", { id: args.id, data: args.text, encoding: "utf8" })) as { bytes: number };
      return inputAnswer(args.id as string, written.bytes);
    },
  },
  {
    name: "ack_task",
    title: "Acknowledge a task's result",
    description: "Mark an ended task's result as received, so it is not reported as unacknowledged again and pruning may remove it.",
    inputSchema: { id },
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    async answer(call, args) {
      return taskAnswer((await call("ack", { id: args.id })) as TaskRecord, "Acknowledged.\n");
    },
  },
];
