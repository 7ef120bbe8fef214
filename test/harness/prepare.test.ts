import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { prepareOnHost } from "../../harness/host/prepare.ts";
import { rustClientMissing } from "../../harness/host/rust-client.ts";

// What a scenario asks the host to make before its steps (harness/shared/host-preparation.ts).
const root = mkdtempSync(join(tmpdir(), "outlive-prepare-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("prepareOnHost", () => {
  it("makes nothing and says nothing when nothing is named", async () => {
    expect(await prepareOnHost([], root)).toBeNull();
  });

  it("refuses a name it does not know, naming it and the ones it knows", async () => {
    await expect(prepareOnHost(["go-client"], root)).rejects.toThrow("Expected each of `prepareOnHost` to be one of rust-client, got `\"go-client\"`");
  });

  it("refuses what is not a list", async () => {
    await expect(prepareOnHost("rust-client" as unknown as string[], root)).rejects.toThrow("Expected the `prepareOnHost` option to be an array of rust-client, got `\"rust-client\"` (string)");
  });
});

describe("rustClientMissing", () => {
  it("names Debian's package when the crate directory has no serde_json", () => {
    const why = rustClientMissing(join(root, "no-registry"));
    // Without cargo the reason is cargo's; with it, serde_json's, naming the directory and the package.
    expect(why).toMatch(/no cargo on PATH|no serde_json in .*no-registry \(apt-get install librust-serde-json-dev/);
  });
});
