import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cannotRunHereReason } from "../../harness/host/container/mod.ts";
import { cli } from "../scenario/cli-process.ts";
import { leftoversOf } from "../scenario/leftovers.ts";
import { ROOTFS_READY_MS, rootfsReady } from "../scenario/rootfs-ready.ts";

// The field's three reports, reproduced: each naive supervisor shows its bug ("reproduced"),
// outlive's module (or census) under the same steps does not ("pass"), on systemd 252 and 257.
const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const missing = await cannotRunHereReason();
if (missing) console.log(`test/harness/examples: skipping: ${missing}`);
const scratch = mkdtempSync(join(tmpdir(), "outlive-examples-run-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe.skipIf(missing !== null)("harness/examples", () => {
  beforeAll(() => rootfsReady(["bookworm", "trixie"]), ROOTFS_READY_MS);

  it("reproduces each field report against its naive supervisor and passes against outlive", async () => {
    const json = join(scratch, "examples.json");
    const files = ["fate-unknown", "idle-reaper", "late-exit"].map((e) => join(ROOT, "harness/examples", e, "scenario.ts"));
    const r = await cli([...files, "--reports", join(scratch, "reports"), "--json", json]);
    const results: { name: string; systemd: number; verdict: string; why: string | null }[] = JSON.parse(readFileSync(json, "utf8")).results;
    const seen = results.map((x) => `${x.name}@${x.systemd}: ${x.verdict}`).sort();
    const expected = ["fate-unknown-naive", "fate-unknown-outlive", "idle-reaper-census", "idle-reaper-naive", "late-exit-naive", "late-exit-outlive"]
      .flatMap((n) => [252, 257].map((v) => `${n}@${v}: ${n.endsWith("-naive") ? "reproduced" : "pass"}`)).sort();
    expect(seen, `${JSON.stringify(results.map((x) => [x.name, x.why]))}\n${r.stderr.slice(-1500)}`).toEqual(expected);
    expect(r.code).toBe(0);
    expect(leftoversOf(r.pid)).toEqual([]);
  }, 400_000);
});
