#!/usr/bin/env node
/**
 * Boot-to-running and teardown per engine, side by side in one run:
 * nspawn (the baseline), podman, the host engine, and the vm engine (qemu)
 * under software emulation (TCG) and, where a probe guest runs under it,
 * KVM. Boot is from launching the engine until systemd and user@UID.service
 * run (a warm cache: the rootfs, the podman image and the guest image are
 * built before the first round). A vm boot takes tens of seconds under
 * TCG, so the vm has its own, smaller count of rounds. The host
 * engine needs PID 1 to be systemd; where it is not (as on a plain CI
 * machine), it is measured inside an nspawn container of the same suite,
 * with a user it makes and lingers each round (what a fresh CI VM costs).
 *
 *   node dist/bench/engines.js [--rounds N] [--vm-rounds N] [--suites bookworm,trixie] [--engines nspawn,podman,host,vm]
 */
import { parseArgs } from "node:util";
import { bootContainer, DEFAULTS, ENGINE_NAMES, ENGINES, type EngineName, resolveOptions, type Suite } from "../harness/host/container/mod.ts";
import { engineMissing } from "../harness/host/container/host-checks/preflight.ts";
import { vmMissing } from "../harness/host/container/engine/vm/vm.ts";
import { DEFAULT_QEMU } from "../harness/host/container/engine/vm/accel-probe.ts";
import { parseSuites } from "./in-container.ts";
import { median } from "./quantile.ts";

const { values } = parseArgs({
  options: {
    rounds: { type: "string", default: "3" },
    /** Rounds of the vm engine, per accelerator: a TCG boot costs 30-60 s here. */
    "vm-rounds": { type: "string", default: "2" },
    suites: { type: "string", default: "bookworm,trixie" },
    engines: { type: "string", default: "nspawn,podman,host,vm" },
    /** Inside a container: measure the host engine only and print JSON. */
    "host-json": { type: "boolean", default: false },
    "cache-dir": { type: "string" },
  },
});
function positive(option: string, raw: string): number {
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) throw new Error(`Expected --${option} to be a positive integer, got ${JSON.stringify(raw)}`);
  return n;
}
const rounds = positive("rounds", values.rounds);
const vmRounds = positive("vm-rounds", values["vm-rounds"]);
const quiet = () => {};

interface Sample { boot: number[]; teardown: number[]; systemd: number }

async function measure(engine: EngineName, suite: Suite | null, extra: Record<string, unknown> = {}, count = rounds): Promise<Sample> {
  const sample: Sample = { boot: [], teardown: [], systemd: 0 };
  // Round 0 warms the caches (debootstrap, podman image) and is not counted.
  for (let i = 0; i <= count; i++) {
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

/**
 * The vm engine under one accelerator: the guest image is built first (the
 * vm's warm-up, instead of a whole uncounted boot), then `vmRounds` boots.
 */
async function measureVm(suite: Suite, accel: "tcg" | "kvm"): Promise<Sample> {
  await ENGINES.vm.prepare!(resolveOptions({ engine: "vm", suite, vmAccel: accel }), quiet);
  const sample: Sample = { boot: [], teardown: [], systemd: 0 };
  for (let i = 0; i < vmRounds; i++) {
    const c = await bootContainer({ engine: "vm", suite, vmAccel: accel }, quiet);
    const down = await c.teardown();
    if (!down.clean) throw new Error(`vm (${accel}) teardown left ${down.leftovers.join(", ")}`);
    sample.boot.push(c.info.readiness.ms);
    sample.teardown.push(down.ms);
    sample.systemd = c.info.readiness.systemdVersion;
  }
  return sample;
}

const engines = values.engines.split(",") as EngineName[];
for (const e of engines) {
  if (!ENGINE_NAMES.includes(e)) throw new Error(`Expected --engines to list engines of ${ENGINE_NAMES.join(", ")}, got ${JSON.stringify(e)}`);
}
const rows: string[] = [];
const fmt = (ms: number) => `${ms.toFixed(0)} ms`.padStart(8);
console.log(`boot (launch → system and user manager running) and teardown, median of ${rounds} rounds after a warm-up (vm: ${vmRounds} rounds after its image is built); ratio vs nspawn on the same suite\n`);
console.log(`${"engine".padEnd(16)} ${"suite".padEnd(9)} ${"systemd".padEnd(8)} ${"boot".padStart(8)} ${"ratio".padStart(6)} ${"teardown".padStart(9)} ${"ratio".padStart(6)}`);
for (const suite of parseSuites(values.suites)) {
  const baseMissing = await engineMissing("nspawn");
  if (baseMissing) {
    console.log(`${suite}: no nspawn baseline here: ${baseMissing}`);
    continue;
  }
  const base = await measure("nspawn", suite);
  const line = (label: string, s: Sample) => {
    const [b, t] = [median(s.boot), median(s.teardown)];
    console.log(
      `${label.padEnd(16)} ${suite.padEnd(9)} ${String(s.systemd).padEnd(8)} ${fmt(b)} ${(b / median(base.boot)).toFixed(2).padStart(5)}x ${fmt(t).padStart(9)} ${(t / median(base.teardown)).toFixed(2).padStart(5)}x`,
    );
  };
  for (const engine of engines) {
    let s: Sample;
    let label: string = engine;
    if (engine === "vm") {
      // Each accelerator the probe lets run: TCG nearly everywhere, KVM where a probe guest runs under it.
      for (const accel of ["tcg", "kvm"] as const) {
        const why = await vmMissing(DEFAULTS.nodePath, DEFAULT_QEMU, accel);
        if (why) rows.push(`vm (${accel.toUpperCase()}) on ${suite}: not measured: ${why}`);
        else line(`vm (${accel.toUpperCase()})`, await measureVm(suite, accel));
      }
      continue;
    }
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
    line(label, s);
  }
}
for (const row of rows) console.log(row);
