import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, it } from "vitest";
import { tempDir } from "../support/cli.ts";
import { expectPromisesHeld, OUTLIVE_ARGV, runDemo } from "./demo-report.ts";

// examples/clients/python against the real `outlive serve` (the built CLI), standalone mode:
// daemon placement is not the point here, the protocol's promises across a SIGKILL are.
const DEMO = fileURLToPath(new URL("../../examples/clients/python/demo.py", import.meta.url));
const python = spawnSync("python3", ["--version"], { encoding: "utf8" });
const missing = python.status === 0 ? null : `no python3 on PATH (${python.error?.message ?? python.stderr.trim()})`;
if (missing) console.log(`test/clients/python: skipping: ${missing}`);

describe.skipIf(missing !== null)("the Python client of outlive serve", () => {
  // Made here, not at the top: a skipped file runs no hooks, and would leave it behind.
  let tmp: ReturnType<typeof tempDir>;
  beforeAll(() => void (tmp = tempDir("outlive-client-python-")));
  afterAll(() => tmp?.remove());
  it("receives the second task's completion once, exit code 7, from the server after a SIGKILL, and the ack holds", async () => {
    const storage = `${tmp.dir}/storage`;
    // -s -E: no user site-packages and no PYTHON* variables, so only the standard library is there; -B: no __pycache__ in the checkout.
    const run = await runDemo(["python3", "-s", "-E", "-B", DEMO, "--storage", storage, "--mode", "standalone", "--", ...OUTLIVE_ARGV]);
    expectPromisesHeld(run, storage);
  }, 120_000);
});
