// PTY tasks: what outlive's holder of the terminal costs against a bare PTY, both measured in this run.
// The holder is outlive-shim (issue 33: it holds the master itself); a second supervisor, interleaved, runs
// the same under the shell wrapper and its `script` holder (shimPath: false), for comparison.
// - keystroke-to-echo: one byte written to a `cat` on a terminal until the kernel's echo of it is seen;
//   outlive: into the task's FIFO (held open, as attach does; and one sup.write per key), echo seen in
//   io/stdout (fs.watch); bare: `script` with pipes. Target (issue 33): <= 1.2x the bare PTY.
// - memory of the holder per task: the shim (RSS and PSS), or the wrapper's script and its sh.
// - throughput: `cat` of a 100 MB file on the terminal, to io/stdout vs out of a bare `script`'s pipe.
// The bare PTY is util-linux `script` spawned directly (no wrapper, holder, FIFO, placement or record around
// it): Node has no PTY of its own.
// Run: npm run build && node dist/bench/pty.js [--rounds N] [--mb M] [--wrapper true|false]
import { spawn } from "node:child_process";
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, statSync, watch, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { parseArgs } from "node:util";
import { openTerminal, ptyPaths, readPtyInfo, Supervisor } from "../lib/internal.ts";
import { readProcStat } from "../lib/proc/stat.ts";
import { median } from "./quantile.ts";

const { values } = parseArgs({
  args: process.argv.slice(2),
  options: { rounds: { type: "string", default: "200" }, mb: { type: "string", default: "100" }, wrapper: { type: "string", default: "true" } },
});
const ROUNDS = Number(values.rounds);
const MB = Number(values.mb);
const dir = mkdtempSync(join(tmpdir(), "outlive-bench-pty-"));
const sup = await Supervisor.open({ storage: join(dir, "s"), log: () => {} });
const wrapped = values.wrapper !== "false" ? await Supervisor.open({ storage: join(dir, "w"), log: () => {}, shimPath: false }) : null;
const ECHO_TARGET = 1.2;
const load = () => readFileSync("/proc/loadavg", "latin1").split(" ").slice(0, 3).join(" ");
console.log(`load ${load()}; ${sup.placementReason}`);

function bareScript(cmd: string, stdout: "pipe" | number = "pipe") {
  return spawn("script", ["-qfec", cmd, "/dev/null"], { stdio: ["pipe", stdout, "ignore"], env: { ...process.env, SHELL: "/bin/sh" } });
}

// keystroke-to-echo
const bare = bareScript("stty -icanon; exec cat >/dev/null");
let bareSeen = 0;
bare.stdout!.on("data", (b: Buffer) => (bareSeen += b.length));
// The same bare PTY, its output into a file seen through fs.watch, as outlive's io/stdout is: what the holder costs
// apart from the way its output is observed.
const bareFilePath = join(dir, "bare-stdout");
const bareFileFd = openSync(bareFilePath, "a");
const bareToFile = bareScript("stty -icanon; exec cat >/dev/null", bareFileFd);
closeSync(bareFileFd);
const bareFile = { bytes: 0 };
const bareWatcher = watch(bareFilePath, () => (bareFile.bytes = statSync(bareFilePath).size));
const echoTask = async (on: Supervisor, storage: string) => {
  const task = await on.run({ id: "echo", shell: "stty -icanon; exec cat >/dev/null", pty: {} });
  const out = join(storage, "tasks", "echo", "io", "stdout");
  const seen = { bytes: statSync(out).size };
  const watcher = watch(out, () => (seen.bytes = statSync(out).size));
  return { task, seen, watcher, keys: () => openTerminal(task.id, ptyPaths(join(storage, "tasks", "echo"))) };
};
const ours = await echoTask(sup, join(dir, "s"));
const theirs = wrapped ? await echoTask(wrapped, join(dir, "w")) : null;
const until = (done: () => boolean) => new Promise<void>((r) => {
  const tick = () => (done() ? r() : setImmediate(tick));
  tick();
});
await new Promise((r) => setTimeout(r, 300));
bareSeen = 0;
const base: number[] = [];
const baseFile: number[] = [];
const perWrite: number[] = [];
const held: number[] = [];
const heldWrapped: number[] = [];
const keys = ours.keys();
const keysWrapped = theirs?.keys();
for (let i = 0; i < ROUNDS + 10; i++) {
  let t0 = performance.now();
  const b0 = bareSeen;
  bare.stdin!.write("a");
  await until(() => bareSeen > b0);
  if (i >= 10) base.push(performance.now() - t0);
  t0 = performance.now();
  const f0 = bareFile.bytes;
  bareToFile.stdin!.write("a");
  await until(() => bareFile.bytes > f0);
  if (i >= 10) baseFile.push(performance.now() - t0);
  t0 = performance.now();
  const o0 = ours.seen.bytes;
  await sup.write(ours.task.id, "a");
  await until(() => ours.seen.bytes > o0);
  if (i >= 10) perWrite.push(performance.now() - t0);
  t0 = performance.now();
  const h0 = ours.seen.bytes;
  await keys.write("a");
  await until(() => ours.seen.bytes > h0);
  if (i >= 10) held.push(performance.now() - t0);
  if (theirs && keysWrapped) {
    t0 = performance.now();
    const w0 = theirs.seen.bytes;
    await keysWrapped.write("a");
    await until(() => theirs.seen.bytes > w0);
    if (i >= 10) heldWrapped.push(performance.now() - t0);
  }
}
keys.close();
keysWrapped?.close();
ours.watcher.close();
theirs?.watcher.close();
const echoRatio = median(held) / median(base);
console.log(`keystroke-to-echo, median of ${ROUNDS} (interleaved): outlive (input held open, as attach does) ${median(held).toFixed(3)} ms vs bare PTY ` +
  `${median(base).toFixed(3)} ms: ${echoRatio.toFixed(2)}x (target <= ${ECHO_TARGET}x) ${echoRatio <= ECHO_TARGET ? "ok" : "MISSED"}; ` +
  `one sup.write per key (open, check, write, close): ${median(perWrite).toFixed(3)} ms, ${(median(perWrite) / median(base)).toFixed(2)}x` +
  (theirs ? `; under the shell wrapper's script holder ${median(heldWrapped).toFixed(3)} ms, ${(median(heldWrapped) / median(base)).toFixed(2)}x` : ""));
const fileRatio = median(held) / median(baseFile);
console.log(`  against the bare PTY writing to a file seen through fs.watch (the same observation as outlive's io/stdout) ${median(baseFile).toFixed(3)} ms: ` +
  `outlive ${fileRatio.toFixed(2)}x (target <= ${ECHO_TARGET}x) ${fileRatio <= ECHO_TARGET ? "ok" : "MISSED"}` +
  (theirs ? `, the shell wrapper's script holder ${(median(heldWrapped) / median(baseFile)).toFixed(2)}x` : ""));
bareWatcher.close();
bareToFile.kill("SIGKILL");

// memory of the holder
const rss = (pid: number) => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))![1]) / 1024;
const pss = (pid: number) => Number(/^Pss:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, "utf8"))![1]) / 1024;
const ourInfo = readPtyInfo(ptyPaths(join(dir, "s", "tasks", "echo")))!;
const holder = readProcStat(ourInfo.pid)!.ppid;
const holderMiB = rss(holder);
console.log(`holder memory per task: ${readProcStat(holder)!.comm} (pid ${holder}, the task's own process) RSS ${holderMiB.toFixed(2)} MiB, ` +
  `PSS ${pss(holder).toFixed(2)} MiB (target <= 8 MiB) ${holderMiB <= 8 ? "ok" : "MISSED"}`);
if (theirs) {
  const info = readPtyInfo(ptyPaths(join(dir, "w", "tasks", "echo")))!;
  const scriptPid = readProcStat(info.pid)!.ppid;
  const holderShPid = readProcStat(scriptPid)!.ppid;
  console.log(`  under the shell wrapper: script ${rss(scriptPid).toFixed(2)} MiB + its sh ${rss(holderShPid).toFixed(2)} MiB + the wrapper sh ` +
    `${rss(theirs.task.pid!).toFixed(2)} MiB RSS (PSS ${(pss(scriptPid) + pss(holderShPid) + pss(theirs.task.pid!)).toFixed(2)} MiB)`);
}
bare.kill("SIGKILL");
await sup.kill(ours.task.id, { graceMs: 500 });
if (theirs) await wrapped!.kill(theirs.task.id, { graceMs: 500 });

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
await wrapped?.close();
console.log(`load at the end ${load()}`);
rmSync(dir, { recursive: true, force: true });
