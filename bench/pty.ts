// PTY tasks: what outlive's holder costs against a bare PTY, both measured in this run.
// - keystroke-to-echo: one byte written to a `cat` on a terminal until the kernel's echo of it is seen;
//   outlive: into the task's FIFO (held open, as attach does; and one sup.write per key), echo seen in
//   io/stdout (inotify); bare: `script` with pipes.
// - resident memory of the holder per task (script, the terminal's master, plus its sh).
// - throughput: `cat` of a 100 MB file on the terminal, to io/stdout vs out of a bare `script`'s pipe.
// The bare PTY is util-linux `script` spawned directly (the same tool the holder uses, with no wrapper,
// holder shell, FIFO, placement or record around it): Node has no PTY of its own.
// Run: npm run build && node dist/bench/pty.js [--rounds N] [--mb M]
import { spawn } from "node:child_process";
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, statSync, watch, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { parseArgs } from "node:util";
import { openTerminal, ptyPaths, readPtyInfo, Supervisor } from "../lib/internal.ts";
import { readProcStat } from "../lib/proc/stat.ts";
import { median } from "./quantile.ts";

const { values } = parseArgs({ args: process.argv.slice(2), options: { rounds: { type: "string", default: "200" }, mb: { type: "string", default: "100" } } });
const ROUNDS = Number(values.rounds);
const MB = Number(values.mb);
const dir = mkdtempSync(join(tmpdir(), "outlive-bench-pty-"));
const sup = await Supervisor.open({ storage: join(dir, "s"), log: () => {} });

function bareScript(cmd: string) {
  return spawn("script", ["-qfec", cmd, "/dev/null"], { stdio: ["pipe", "pipe", "ignore"], env: { ...process.env, SHELL: "/bin/sh" } });
}

// keystroke-to-echo
const bare = bareScript("stty -icanon; exec cat >/dev/null");
let bareSeen = 0;
bare.stdout!.on("data", (b: Buffer) => (bareSeen += b.length));
const task = await sup.run({ id: "echo", shell: "stty -icanon; exec cat >/dev/null", pty: {} });
const out = join(dir, "s", "tasks", "echo", "io", "stdout");
let ourSeen = statSync(out).size;
const watcher = watch(out, () => (ourSeen = statSync(out).size));
const until = (done: () => boolean) => new Promise<void>((r) => {
  const tick = () => (done() ? r() : setImmediate(tick));
  tick();
});
await new Promise((r) => setTimeout(r, 300));
bareSeen = 0;
const base: number[] = [];
const ours: number[] = [];
const held: number[] = [];
const keys = openTerminal(task.id, ptyPaths(join(dir, "s", "tasks", "echo")));
for (let i = 0; i < ROUNDS + 10; i++) {
  let t0 = performance.now();
  const b0 = bareSeen;
  bare.stdin!.write("a");
  await until(() => bareSeen > b0);
  if (i >= 10) base.push(performance.now() - t0);
  t0 = performance.now();
  const o0 = ourSeen;
  await sup.write(task.id, "a");
  await until(() => ourSeen > o0);
  if (i >= 10) ours.push(performance.now() - t0);
  t0 = performance.now();
  const h0 = ourSeen;
  await keys.write("a");
  await until(() => ourSeen > h0);
  if (i >= 10) held.push(performance.now() - t0);
}
keys.close();
watcher.close();
const echoRatio = median(held) / median(base);
console.log(`keystroke-to-echo, median of ${ROUNDS} (interleaved): outlive (input held open, as attach does) ${median(held).toFixed(3)} ms vs bare PTY ` +
  `${median(base).toFixed(3)} ms: ${echoRatio.toFixed(2)}x (target <= 2x) ${echoRatio <= 2 ? "ok" : "MISSED"}; ` +
  `one sup.write per key (open, check, write, close): ${median(ours).toFixed(3)} ms, ${(median(ours) / median(base)).toFixed(2)}x`);

// resident memory of the holder
const info = readPtyInfo(ptyPaths(join(dir, "s", "tasks", "echo")))!;
const scriptPid = readProcStat(info.pid)!.ppid;
const holderShPid = readProcStat(scriptPid)!.ppid;
const rss = (pid: number) => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))![1]) / 1024;
const holderMiB = rss(scriptPid) + rss(holderShPid);
console.log(`holder resident memory per task: script ${rss(scriptPid).toFixed(2)} MiB + its sh ${rss(holderShPid).toFixed(2)} MiB = ` +
  `${holderMiB.toFixed(2)} MiB (target <= 8 MiB) ${holderMiB <= 8 ? "ok" : "MISSED"}; (the wrapper sh every task has: ${rss(task.pid!).toFixed(2)} MiB)`);
bare.kill("SIGKILL");
await sup.kill(task.id, { graceMs: 500 });

// throughput
const file = join(dir, "data.txt");
const fd = openSync(file, "w");
const line = `${"0123456789abcdef".repeat(6)}\n`;
const chunk = line.repeat(Math.floor((1 << 20) / line.length));
for (let i = 0; i < MB; i++) writeSync(fd, chunk);
closeSync(fd);
const bytes = statSync(file).size;
const bareRun = () => new Promise<number>((resolve) => {
  const t0 = performance.now();
  const p = bareScript(`cat ${file}`);
  p.stdout!.on("data", () => {});
  p.once("exit", () => resolve(performance.now() - t0));
});
const ourRun = async (i: number) => {
  const t0 = performance.now();
  const t = await sup.run({ id: `cat-${i}`, argv: ["cat", file], pty: {} });
  await sup.wait(t.id);
  const ms = performance.now() - t0;
  rmSync(join(dir, "s", "tasks", t.id, "io", "stdout"));
  return ms;
};
const baseT: number[] = [];
const ourT: number[] = [];
for (let i = 0; i < 3; i++) {
  baseT.push(await bareRun());
  ourT.push(await ourRun(i));
}
const mbps = (ms: number) => bytes / 1e6 / (ms / 1000);
const tRatio = mbps(median(ourT)) / mbps(median(baseT));
console.log(`cat of ${(bytes / 1e6).toFixed(0)} MB on the terminal, median of 3: outlive ${mbps(median(ourT)).toFixed(0)} MB/s vs bare PTY ` +
  `${mbps(median(baseT)).toFixed(0)} MB/s: ${tRatio.toFixed(2)}x (target >= 0.7x) ${tRatio >= 0.7 ? "ok" : "MISSED"}`);
await sup.close();
rmSync(dir, { recursive: true, force: true });
