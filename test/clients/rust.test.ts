import { afterAll, beforeAll, describe, it } from "vitest";
import { buildRustClient, rustClientMissing } from "../../harness/host/rust-client.ts";
import { tempDir } from "../support/cli.ts";
import { expectPromisesHeld, OUTLIVE_ARGV, runDemo } from "./demo-report.ts";

// examples/clients/rust, built offline with the machine's cargo and Debian's serde_json into this
// test's temp dir, against the real `outlive serve` (the built CLI), standalone mode.
const missing = rustClientMissing();
if (missing) console.log(`test/clients/rust: skipping: ${missing}`);

describe.skipIf(missing !== null)("the Rust client of outlive serve", () => {
  // Made here, not at the top: a skipped file runs no hooks, and would leave it behind.
  let tmp: ReturnType<typeof tempDir>;
  let demo = "";
  beforeAll(async () => {
    tmp = tempDir("outlive-client-rust-");
    demo = (await buildRustClient(`${tmp.dir}/build`)).demo;
  }, 300_000);
  afterAll(() => tmp?.remove());

  it("receives the second task's completion once, exit code 7, from the server after a SIGKILL, and the ack holds", async () => {
    const storage = `${tmp.dir}/storage`;
    const run = await runDemo([demo, "--storage", storage, "--mode", "standalone", "--", ...OUTLIVE_ARGV]);
    expectPromisesHeld(run, storage);
  }, 120_000);
});
