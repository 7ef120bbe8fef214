import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { readExitMarkerNow } from "../../lib/observe/exit-marker.ts";

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

// A writer in another process makes marker after marker as the shim does at spawn and at the end: a new file
// with the placeholder, dated an hour ago (a task that ran an hour), renamed into place, then the code written
// over the placeholder; for half a second and 2000 markers at least. A reader that took the file's time before
// reading its text could pair the new code with the placeholder's old time, and date an end an hour early (seen
// under load: finishedAt 545 ms before io/exit's time).
const WRITER = `
const { closeSync, openSync, renameSync, utimesSync, writeSync } = require("node:fs");
const [path, until] = [process.argv[1], Number(process.argv[2])];
const old = (Date.now() - 3600_000) / 1000;
for (let i = 0; Date.now() < until || i < 2000; i++) {
  const tmp = path + ".tmp";
  const fd = openSync(tmp, "w");
  writeSync(fd, "    ");
  utimesSync(tmp, old, old);
  renameSync(tmp, path);
  writeSync(fd, "7  \\n", 0);
  closeSync(fd);
}
`;

describe("readExitMarkerNow", () => {
  it("dates a code by the file's time after the code was read, never the placeholder's before it", async () => {
    const dir = mkdtempSync(join(tmpdir(), "outlive-marker-"));
    dirs.push(dir);
    const path = join(dir, "exit");
    const writer = spawn(process.execPath, ["-e", WRITER, path, String(Date.now() + 500)], { stdio: "inherit" });
    const done = new Promise((r) => writer.once("exit", r));
    const seen = { code: 0, empty: 0, stale: [] as string[] };
    const anHourAgo = Date.now() - 3000_000;
    while (writer.exitCode === null) {
      let m: ReturnType<typeof readExitMarkerNow>;
      try {
        m = readExitMarkerNow(path);
      } catch {
        continue;
      }
      if (m.kind === "empty") seen.empty++;
      if (m.kind === "code") {
        seen.code++;
        if (Date.parse(m.writtenAt) < anHourAgo) seen.stale.push(m.writtenAt);
      }
      if (seen.code + seen.empty > 200_000) break;
      if ((seen.code + seen.empty) % 1000 === 0) await new Promise((r) => setImmediate(r));
    }
    writer.kill();
    await done;
    // Both states were met, so the race was run, not missed.
    expect(seen.code).toBeGreaterThan(10);
    expect(seen.empty).toBeGreaterThan(10);
    expect(seen.stale, `${seen.stale.length} of ${seen.code} codes dated by the placeholder's time`).toEqual([]);
  });
});
