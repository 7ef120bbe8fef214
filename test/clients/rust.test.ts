import { afterAll, beforeAll, describe, it } from "vitest";
import { buildRustClient, rustClientMissing } from "../../harness/host/rust-client.ts";
import { tempDir } from "../support/cli.ts";
import { expectPromisesHeld, OUTLIVE_ARGV, runDemo } from "./demo-report.ts";

// examples/clients/rust, built offline with the machine's cargo and Debian's serde_json into this
// test's temp dir, against the real `outlive serve` (the built CLI), standalone mode.
const missing = rustClientMissing();
if (missing) console.log(`test/clients/rust: skipping: ${missing}`);
const tmp = tempDir("outlive-client-rust-");
afterAll(tmp.remove);

describe.skipIf(missing !== null)("the Rust client of outlive serve", () => {
  let demo = "";
  beforeAll(async () => {
    demo = (await buildRustClient(`${tmp.dir}/build`)).demo;
  }, 300_000);

  it("receives the second task's completion once, exit code 7, from the server after a SIGKILL, and the ack holds", async () => {
    const storage = `${tmp.dir}/storage`;
    const run = await runDemo([demo, "--storage", storage, "--mode", "standalone", "--", ...OUTLIVE_ARGV]);
    expectPromisesHeld(run, storage);
  }, 120_000);
});
