// From a line written by a task to the follower holding it: median and p99,
// for a task this incarnation started and for one it adopted. Each line
// carries the wall-clock time the task wrote it (`date +%s%N`), and the
// follower subtracts it from the time it got the chunk. Baseline, in the same
// run, on the same lines: a bare reader woken by fs.watch on the same
// directory (the least any follower of a file can cost).
// Run: npm run build && node dist/bench/follow-latency.js [--lines N]
import { closeSync, mkdtempSync, openSync, readSync, rmSync, watch, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { parseArgs } from "node:util";
import { Supervisor } from "../lib/mod.ts";
import { quantile } from "./quantile.ts";

const { values } = parseArgs({ args: process.argv.slice(2), options: { lines: { type: "string", default: "200" } } });
const LINES = Number(values.lines);
const TARGET_MS = 20;
const nowNs = () => BigInt(Math.round((performance.timeOrigin + performance.now()) * 1e6));

/** Latencies of every whole line in `text`, each `<ns>\n`, at time `at`. */
function latencies(text: string, at: bigint): number[] {
  return text.split("\n").filter((l) => /^\d+$/.test(l)).map((l) => Number(at - BigInt(l)) / 1e6);
}

/** The bare reader: fs.watch on io/, then read what is new. */
function bareReader(io: string, file: string, out: number[]): () => void {
  let offset = 0;
  let partial = "";
  const look = () => {
    let fd: number;
    try {
      fd = openSync(file, "r");
    } catch {
      return;
    }
    const buf = Buffer.alloc(65536);
    for (let n; (n = readSync(fd, buf, 0, buf.length, offset)) > 0;) {
      offset += n;
      const text = partial + buf.subarray(0, n).toString("latin1");
      const cut = text.lastIndexOf("\n") + 1;
      partial = text.slice(cut);
      out.push(...latencies(text.slice(0, cut), nowNs()));
    }
    closeSync(fd);
  };
  const w = watch(io, look);
  look();
  return () => w.close();
}

async function measure(sup: Supervisor, id: string, go: string): Promise<{ outlive: number[]; bare: number[] }> {
  const outlive: number[] = [];
  const bare: number[] = [];
  const paths = sup.store.paths(id);
  const stop = bareReader(paths.io, paths.stdout, bare);
  let partial = "";
  // The task starts writing once both followers are waiting.
  setTimeout(() => writeFileSync(go, ""), 200);
  for await (const chunk of sup.output(id, { from: 0 })) {
    const text = partial + Buffer.from(chunk.data).toString("latin1");
    const cut = text.lastIndexOf("\n") + 1;
    partial = text.slice(cut);
    outlive.push(...latencies(text.slice(0, cut), nowNs()));
  }
  stop();
  return { outlive, bare };
}

const shell = (go: string) => `while [ ! -e ${go} ]; do sleep 0.01; done; i=0; while [ $i -lt ${LINES} ]; do date +%s%N; i=$((i+1)); sleep 0.02; done`;
const storage = mkdtempSync(join(tmpdir(), "outlive-bench-follow-"));
try {
  const first = await Supervisor.open({ storage, log: () => {} });
  const go = [join(storage, "go-1"), join(storage, "go-2")];
  const own = await first.run({ shell: shell(go[0]) });
  const adoptedTask = await first.run({ shell: shell(go[1]) });
  const mine = await measure(first, own.id, go[0]);
  await first.close();
  const second = await Supervisor.open({ storage, log: () => {} });
  if (!second.replayReport.adopted.includes(adoptedTask.id)) throw new Error(`${adoptedTask.id} was not adopted`);
  const adopted = await measure(second, adoptedTask.id, go[1]);
  await second.close();
  for (const [name, r] of [["started here", mine], ["adopted", adopted]] as const) {
    const m = quantile(r.outlive, 0.5);
    const p99 = quantile(r.outlive, 0.99);
    const base = quantile(r.bare, 0.5);
    console.log(
      `follow latency, task ${name.padEnd(12)}: median ${m.toFixed(2)} ms, p99 ${p99.toFixed(2)} ms over ${r.outlive.length} lines; ` +
        `bare fs.watch reader median ${base.toFixed(2)} ms, p99 ${quantile(r.bare, 0.99).toFixed(2)} ms; ratio ${(m / base).toFixed(2)}x ` +
        `(target median <= ${TARGET_MS} ms) ${m <= TARGET_MS ? "ok" : "MISSED"}`,
    );
  }
} finally {
  rmSync(storage, { recursive: true, force: true });
}
