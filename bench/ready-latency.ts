// How soon `outlive run --wait-ready` answers once a real dev server's port accepts connections (issue 34):
// for each server (vite's dev server from npm, python's http.server), ROUNDS runs of the CLI in a process of its
// own, and beside each a probe loop of the bench's own (a TCP connect every millisecond) that marks the moment the
// port first accepts. The figure is the time from that moment to the CLI's printed id; its ratio is against the
// probe loop's own step (what a client polling as hard as it can would see).
// Target: median <= 100 ms.
// Run: npm run build && node dist/bench/ready-latency.js [--rounds 10]
import { spawn, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { connect, createServer } from "node:net";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { parseArgs } from "node:util";
import { median, quantile } from "./quantile.ts";

const { values } = parseArgs({ args: process.argv.slice(2), options: { rounds: { type: "string", default: "10" } } });
const ROUNDS = Number(values.rounds);
const ROOT = join(import.meta.dirname, "..", "..");
const CLI = join(import.meta.dirname, "..", "scripts", "bin.js");
const VITE = join(ROOT, "node_modules", "vite", "bin", "vite.js");
const dir = mkdtempSync(join(tmpdir(), "outlive-bench-ready-"));
const storage = join(dir, "storage");
const app = join(dir, "app");
mkdirSync(app);
writeFileSync(join(app, "index.html"), "<h1>bench</h1>\n");

async function freePort(): Promise<number> {
  const s = createServer().listen(0, "127.0.0.1");
  await new Promise((r) => s.once("listening", r));
  const { port } = s.address() as { port: number };
  await new Promise((r) => s.close(r));
  return port;
}

/** performance.now() of the first connect to `port` that is accepted; tries every millisecond until `stop`. */
function firstAccept(port: number, stop: AbortSignal): Promise<number | null> {
  return new Promise((resolve) => {
    const tryOnce = () => {
      if (stop.aborted) return resolve(null);
      const at = performance.now();
      const c = connect(port, "127.0.0.1");
      c.once("connect", () => {
        c.destroy();
        resolve(at);
      });
      c.once("error", () => setTimeout(tryOnce, 1));
    };
    tryOnce();
  });
}

async function round(server: "vite" | "python"): Promise<{ lagMs: number; id: string }> {
  const port = await freePort();
  const argv = server === "vite"
    ? [process.execPath, VITE, "--port", String(port), "--strictPort", "--host", "127.0.0.1"]
    : ["python3", "-m", "http.server", String(port), "--bind", "127.0.0.1"];
  const stop = new AbortController();
  const accepted = firstAccept(port, stop.signal);
  const child = spawn(process.execPath, ["--", CLI, "run", "--storage", storage, "--cwd", app, "--ready-port", String(port), "--wait-ready", "--", ...argv], { stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let err = "";
  child.stderr!.on("data", (d) => (err += d));
  const printed = await new Promise<number>((resolve, reject) => {
    child.stdout!.on("data", (d) => {
      out += d;
      if (out.includes("\n")) resolve(performance.now());
    });
    child.once("exit", (code) => (code === 0 ? undefined : reject(new Error(`outlive run exited ${code}: ${err}`))));
  });
  const at = await Promise.race([accepted, new Promise<null>((r) => setTimeout(() => r(null), 5000))]);
  stop.abort();
  if (at === null) throw new Error("the probe loop never saw the port accept");
  const id = out.trim();
  spawnSync(process.execPath, ["--", CLI, "kill", "--storage", storage, id], { stdio: "ignore" });
  return { lagMs: printed - at, id };
}

console.log(`bench/ready-latency: ${ROUNDS} rounds a server, load average ${loadavg().map((l) => l.toFixed(2)).join(" ")} on ${import.meta.dirname}`);
try {
  for (const server of ["python", "vite"] as const) {
    const lags: number[] = [];
    for (let i = 0; i < ROUNDS; i++) lags.push((await round(server)).lagMs);
    const m = median(lags);
    console.log(`${server.padEnd(7)} run --wait-ready printed the id ${m.toFixed(1)} ms (median; p90 ${quantile(lags, 0.9).toFixed(1)}, min ${Math.min(...lags).toFixed(1)}, max ${Math.max(...lags).toFixed(1)}) after the port first accepted; ${(m / 1).toFixed(0)}x the probe loop's 1 ms step; target <= 100 ms: ${m <= 100 ? "met" : "missed"}`);
  }
} finally {
  spawnSync(process.execPath, ["--", CLI, "stop-all", "--storage", storage], { stdio: "ignore" });
  rmSync(dir, { recursive: true, force: true });
}
console.log(`load average after: ${loadavg().map((l) => l.toFixed(2)).join(" ")}`);
