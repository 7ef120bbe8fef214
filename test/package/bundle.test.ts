import { execFile } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { CgroupV2Placement } from "../../lib/internal.ts";
import { writeModuleRecorder } from "../support/module-recorder.ts";

// `import "outlive"` as a user's project does it: from a folder outside the repository whose
// node_modules/outlive is this package. It loads the bundle the package's "." export names
// (dist/pkg/outlive.js, scripts/bundle-lib.ts): one module of outlive's own, not the ~150 of
// dist/lib/ one by one, and from there it still finds the spawner's program and the wire
// protocol's schema, which live as files in the package, not in the bundle.
const ROOT = realpathSync(fileURLToPath(new URL("../../", import.meta.url)));
const run = promisify(execFile);
const app = mkdtempSync(join(tmpdir(), "outlive-bundle-app-"));
afterAll(() => rmSync(app, { recursive: true, force: true }));
mkdirSync(join(app, "node_modules"));
symlinkSync(ROOT, join(app, "node_modules", "outlive"));
writeFileSync(join(app, "package.json"), JSON.stringify({ name: "my-app", version: "1.0.0", type: "module", private: true }));

// Records every module URL the process resolves, as start-up.test.ts does for the CLI.
const recorder = writeModuleRecorder(app);

// The user's supervisor: a task that exits 7 under the placement asked for, and the schema's path.
writeFileSync(join(app, "supervisor.mjs"), `
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Supervisor, rpcSchemaPath } from "outlive";
const storage = mkdtempSync(join(tmpdir(), "outlive-bundle-storage-"));
const sup = await Supervisor.open({ storage, placement: process.argv[2], prefix: "bundle" + process.pid, mode: "daemon", control: false, log: () => {} });
try {
  const task = await sup.run({ argv: ["sh", "-c", "exit 7"] });
  const end = await sup.wait(task.id);
  console.log(JSON.stringify({ placement: sup.placement.name, state: end.state, exitCode: end.exitCode, schema: rpcSchemaPath() }));
} finally {
  await sup.drain("disable");
  rmSync(storage, { recursive: true, force: true });
}
`);

async function userSupervisor(placement: string): Promise<{ out: Record<string, unknown>; modules: string[] }> {
  const list = join(app, `modules-${placement}.txt`);
  writeFileSync(list, "");
  const { stdout } = await run(process.execPath, ["--import", recorder, "supervisor.mjs", placement], {
    cwd: app, env: { ...process.env, OUTLIVE_TEST_MODULES: list }, timeout: 60_000,
  });
  const modules = readFileSync(list, "utf8").split("\n").filter(Boolean);
  return { out: JSON.parse(stdout.trim().split("\n").at(-1)!), modules };
}

const cgroupProbe = await new CgroupV2Placement({ prefix: `bundleprobe${process.pid}` }).probe();
if (!cgroupProbe.ok) console.log(`test/package/bundle: the cgroup-v2 case skipped: ${cgroupProbe.reason}`);

describe("import \"outlive\" from a project outside the repository", () => {
  it("loads the bundle alone of outlive's own modules, and runs a task with its real exit code", async () => {
    expect(existsSync(join(ROOT, "dist/pkg/outlive.js")), "the build made dist/pkg/outlive.js (npm run build)").toBe(true);
    const { out, modules } = await userSupervisor("process-group");
    expect(out).toMatchObject({ placement: "process-group", state: "exited", exitCode: 7 });
    // Its npm packages (json-rpc-2.0, smol-toml) load from node_modules as usual; none of outlive's own files but the bundle.
    const own = modules.filter((m) => m.startsWith(`file://${ROOT}/`) && !m.startsWith(`file://${ROOT}/node_modules/`));
    expect(own).toEqual([`file://${ROOT}/dist/pkg/outlive.js`]);
    // The schema is a file of the package, found from the bundle's folder, not a path above the package.
    expect(out.schema).toBe(join(ROOT, "lib/rpc/schema/outlive-rpc.schema.json"));
    expect(JSON.parse(readFileSync(out.schema as string, "utf8")).$id).toBe("urn:outlive:rpc:1");
  }, 90_000);

  it.skipIf(!cgroupProbe.ok)("forks through the spawner's program, found from the bundle (cgroup-v2)", async () => {
    const { out, modules } = await userSupervisor("cgroup-v2");
    expect(out).toMatchObject({ placement: "cgroup-v2", state: "exited", exitCode: 7 });
    expect(modules.filter((m) => m.startsWith(`file://${ROOT}/dist/lib/`))).toEqual([]);
  }, 90_000);
});
