#!/usr/bin/env node
/**
 * Boot-to-running and teardown per engine, side by side in one run:
 * nspawn (the baseline), podman, and the host engine. Boot is from launching
 * the engine until systemd and user@UID.service run (a warm cache: the
 * rootfs and the podman image are built before the first round). The host
 * engine needs PID 1 to be systemd; where it is not (as on a plain CI
 * machine), it is measured inside an nspawn container of the same suite,
 * with a user it makes and lingers each round (what a fresh CI VM costs).
 *
 *   node dist/bench/engines.js [--rounds N] [--suites bookworm,trixie] [--engines nspawn,podman,host]
 */
import { parseArgs } from "node:util";
import { bootContainer, type EngineName, type Suite } from "../harness/host/container/mod.ts";
import { engineMissing } from "../harness/host/container/preflight.ts";
import { parseSuites } from "./in-container.ts";
import { median } from "./quantile.ts";

const { values } = parseArgs({
  options: {
    rounds: { type: "string", default: "3" },
    suites: { type: "string", default: "bookworm,trixie" },
    engines: { type: "string", default: "nspawn,podman,host" },
    /** Inside a container: measure the host engine only and print JSON. */
    "host-json": { type: "boolean", default: false },
    "cache-dir": { type: "string" },
  },
});
const rounds = Number(values.rounds);
if (!Number.isInteger(rounds) || rounds < 1) throw new Error(`Expected --rounds to be a positive integer, got ${values.rounds}`);
const quiet = () => {};

interface Sample { boot: number[]; teardown: number[]; systemd: number }

async function measure(engine: EngineName, suite: Suite | null, extra: Record<string, unknown> = {}): Promise<Sample> {
  const sample: Sample = { boot: [], teardown: [], systemd: 0 };
  // Round 0 warms the caches (debootstrap, podman image) and is not counted.
  for (let i = 0; i <= rounds; i++) {
    const c = await bootContainer({ engine, ...(suite ? { suite } : {}), ...extra }, quiet);
    const down = await c.teardown();
    if (!down.clean) throw new Error(`${engine} teardown left ${down.leftovers.join(", ")}`);
    if (i === 0) continue;
    sample.boot.push(c.info.readiness.ms);
    sample.teardown.push(down.ms);
    sample.systemd = c.info.readiness.systemdVersion;
  }
  return sample;
}

if (values["host-json"]) {
  const s = await measure("host", null, { user: "outlive-bench", uid: 1600, cacheDir: values["cache-dir"] ?? "/tmp/outlive-bench-cache" });
  console.log(JSON.stringify(s));
  process.exit(0);
}

/** The host engine inside an nspawn container of the suite, as root there. */
async function hostInside(suite: Suite): Promise<Sample> {
  const c = await bootContainer({ suite, engine: "nspawn" }, quiet);
  try {
    const r = await c.exec(["/usr/local/bin/node", "dist/bench/engines.js", "--host-json", "--rounds", String(rounds)], { timeoutMs: 600_000 });
    if (r.exitCode !== 0) throw new Error(`the host engine bench inside ${suite} failed: ${r.stderr.trim()}`);
    return JSON.parse(r.stdout.trim().split("\n").at(-1)!);
  } finally {
    await c.teardown();
  }
}

const engines = values.engines.split(",") as EngineName[];
const rows: string[] = [];
const fmt = (ms: number) => `${ms.toFixed(0)} ms`.padStart(8);
console.log(`boot (launch → system and user manager running) and teardown, median of ${rounds} rounds after a warm-up; ratio vs nspawn on the same suite\n`);
console.log(`${"engine".padEnd(16)} ${"suite".padEnd(9)} ${"systemd".padEnd(8)} ${"boot".padStart(8)} ${"ratio".padStart(6)} ${"teardown".padStart(9)} ${"ratio".padStart(6)}`);
for (const suite of parseSuites(values.suites)) {
  const baseMissing = await engineMissing("nspawn");
  if (baseMissing) {
    console.log(`${suite}: no nspawn baseline here: ${baseMissing}`);
    continue;
  }
  const base = await measure("nspawn", suite);
  for (const engine of engines) {
    let s: Sample;
    let label: string = engine;
    if (engine === "nspawn") s = base;
    else if (engine === "host" && (await engineMissing("host")) !== null) {
      s = await hostInside(suite);
      label = "host (in nspawn)";
    } else {
      const why = await engineMissing(engine);
      if (why) {
        rows.push(`${engine} on ${suite}: not measured: ${why}`);
        continue;
      }
      s = await measure(engine, suite);
    }
    const [b, t] = [median(s.boot), median(s.teardown)];
    console.log(
      `${label.padEnd(16)} ${suite.padEnd(9)} ${String(s.systemd).padEnd(8)} ${fmt(b)} ${(b / median(base.boot)).toFixed(2).padStart(5)}x ${fmt(t).padStart(9)} ${(t / median(base.teardown)).toFixed(2).padStart(5)}x`,
    );
  }
}
for (const row of rows) console.log(row);
