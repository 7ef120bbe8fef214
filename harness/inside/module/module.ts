#!/usr/bin/env node
/**
 * The "module": a long-running supervisor process as a daemon runs it. It
 * opens an outlive supervisor on a storage (replaying what an earlier
 * incarnation left) and speaks newline-delimited JSON over stdio:
 *
 *   → {"req":1,"op":"run","spec":{…RunSpec}}       ← {"reply":1,"ok":true,"task":{…}}
 *   → {"req":2,"op":"kill","id":"…","graceMs":500} ← {"reply":2,"ok":true,"how":"term","task":{…}}
 *   → {"req":3,"op":"list"}                        ← {"reply":3,"ok":true,"tasks":[…]}
 *   → {"req":4,"op":"ack","id":"…"}                ← {"reply":4,"ok":true,"task":{…}}
 *   → {"req":5,"op":"write","id":"…","data":"ls\n"} ← {"reply":5,"ok":true}  (a PTY task's terminal)
 *   → {"req":6,"op":"resize","id":"…","cols":100,"rows":30} ← {"reply":6,"ok":true,"size":{…}}
 *   → {"req":7,"op":"follow","id":"…","to":FILE}   ← {"reply":7,"ok":true,"from":N}
 *     appends the task's stdout to FILE, resuming at FILE's size (what an earlier
 *     incarnation stored is exactly what it received); ← {"event":"followed","id":…,"bytes":…}
 *     once the task is over and read to the end.
 *   → {"req":8,"op":"prune","keep":2}              ← {"reply":8,"ok":true,"removed":[…]}  (acknowledged ends, oldest first)
 *   → {"op":"draining","reason":"restart"}          ← {"event":"drained","reason":"restart"}, then exit 0
 *   ← {"event":"ready","incarnation":…,"pid":…,"placement":…,"reason":…,"replay":{…}}
 *   ← {"event":"completion","task":{…}}             (each terminal task once; ack to stop redelivery)
 *
 * EOF on stdin without a drain notice means the daemon went away: every task
 * is ended, as for `disable`.
 */
import { appendFileSync, existsSync, statSync } from "node:fs";
import { createInterface } from "node:readline";
import { parseArgs } from "node:util";
// By the package's name, as a user's supervisor imports it: Node loads the bundled library (dist/pkg/outlive.js,
// scripts/bundle-lib.ts), which is what a restart pays before anything is adopted; Deno maps it to lib/mod.ts.
import { OutliveError, Supervisor, type SupervisorOptions } from "outlive";

const { values } = parseArgs({
  args: process.argv.slice(2),
  options: {
    storage: { type: "string" },
    placement: { type: "string" },
    prefix: { type: "string" },
    mode: { type: "string" },
    "grace-ms": { type: "string" },
    "liveness-ms": { type: "string" },
    "backstop-slack-seconds": { type: "string" },
  },
});

function send(message: unknown): void {
  process.stdout.write(`${JSON.stringify(message)}\n`);
}

const sup = await Supervisor.open({
  storage: values.storage,
  mode: (values.mode ?? "daemon") as SupervisorOptions["mode"],
  placement: (values.placement ?? "auto") as SupervisorOptions["placement"],
  prefix: values.prefix,
  graceMs: values["grace-ms"] ? Number(values["grace-ms"]) : undefined,
  livenessIntervalMs: values["liveness-ms"] ? Number(values["liveness-ms"]) : undefined,
  backstopSlackSeconds: values["backstop-slack-seconds"] ? Number(values["backstop-slack-seconds"]) : undefined,
  log: (line) => {

    process.stderr.write(`module: ${line}\n`);
  },
});

send({
  event: "ready",
  pid: process.pid,
  incarnation: sup.incarnation.id,
  placement: sup.placement.name,
  reason: sup.placementReason,
  replay: sup.replayReport,
});

(async () => {
  for await (const task of sup.completions()) send({ event: "completion", task });
})();

let drained = false;
const lines = createInterface({ input: process.stdin });
for await (const line of lines) {
  if (!line.trim()) continue;
  let msg: { req?: number; op?: string; spec?: unknown; id?: string; graceMs?: number; reason?: string };
  try {
    msg = JSON.parse(line);
  } catch {
    send({ event: "error", message: `not JSON: ${line.slice(0, 80)}` });
    continue;
  }
  if (msg.op === "draining") {
    drained = true;
    await sup.drain(msg.reason as never).catch((e) => send({ event: "error", message: (e as Error).message }));
    send({ event: "drained", reason: msg.reason });
    break;
  }
  void handle(msg);
}
if (!drained) {
  // The connection ended with no drain notice: the daemon is gone for good.
  await sup.drain("shutdown");
}
process.exit(0);

async function handle(msg: {
  req?: number; op?: string; spec?: unknown; id?: string; graceMs?: number; data?: string; cols?: number; rows?: number; to?: string; keep?: number;
}): Promise<void> {
  try {
    switch (msg.op) {
      case "run":
        return send({ reply: msg.req, ok: true, task: await sup.run(msg.spec as never) });
      case "kill": {
        const result = await sup.kill(msg.id!, { graceMs: msg.graceMs });
        return send({ reply: msg.req, ok: true, how: result.how, task: result.record });
      }
      case "write":
        await sup.write(msg.id!, msg.data!);
        return send({ reply: msg.req, ok: true });
      case "resize":
        return send({ reply: msg.req, ok: true, size: await sup.resize(msg.id!, msg.cols!, msg.rows!) });
      case "list":
        return send({ reply: msg.req, ok: true, tasks: sup.list() });
      case "get":
        return send({ reply: msg.req, ok: true, task: sup.get(msg.id!) });
      case "ack":
        return send({ reply: msg.req, ok: true, task: await sup.ack(msg.id!) });
      case "prune":
        return send({ reply: msg.req, ok: true, removed: (await sup.prune({ keep: msg.keep })).removed });
      case "follow": {
        const from = existsSync(msg.to!) ? statSync(msg.to!).size : 0;
        const chunks = sup.output(msg.id!, { from });
        void follow(msg.id!, msg.to!, chunks);
        return send({ reply: msg.req, ok: true, from });
      }
      default:
        return send({ reply: msg.req, ok: false, code: "E_BAD_OPTION", message: `unknown op ${JSON.stringify(msg.op)}` });
    }
  } catch (error) {
    send({ reply: msg.req, ok: false, code: (error as OutliveError).code ?? "E_INTERNAL", message: (error as Error).message });
  }
}

/** One write per chunk: a SIGKILL lands between writes, so FILE's size is always the offset to resume at. */
async function follow(id: string, to: string, chunks: AsyncIterable<{ data: Uint8Array; missed: number; offset: number }>): Promise<void> {
  try {
    for await (const chunk of chunks) {
      if (chunk.missed > 0) send({ event: "missed", id, offset: chunk.offset, missed: chunk.missed });
      else appendFileSync(to, chunk.data);
    }
    send({ event: "followed", id, bytes: statSync(to).size });
  } catch (error) {
    send({ event: "follow-ended", id, code: (error as OutliveError).code, message: (error as Error).message });
  }
}
