import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

// The package's public API as a user imports it (`import … from "outlive"`, resolved through package.json's
// exports from a process of its own, so the bundle is what answers). Every runtime name here is a promise
// users build on: adding or removing one is a decision, made here and in lib/mod.ts together.
const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const run = promisify(execFile);

/** The runtime exports, in groups as lib/mod.ts orders them. */
const PUBLIC = {
  supervisor: ["Supervisor", "READY_AT_SOURCES", "TASK_STEPS", "DEFAULT_RETENTION", "DEFAULT_PTY_SIZE", "MAX_PTY_SIDE", "OutliveError", "probe"],
  record: ["ALL_STATES", "FINISHED_AT_SOURCES", "isTerminal", "PLACEMENT_NAMES", "SCHEMA_VERSION", "TERMINAL_STATES", "parseRecord", "taskPaths", "defaultStorageRoot"],
  wire: ["METHODS", "NOTIFICATIONS", "PROTOCOL_VERSIONS", "RPC_ERRORS", "RpcError", "RPC_SCHEMA_ID", "rpcSchemaPath", "controlSocketPath", "askHolder", "connectHolder", "NO_HOLDER", "openSession"],
  census: ["takeCensus", "takeSnapshot", "underLeader", "decideIdle", "mayRetireIdle", "readLaunchRecord", "logRefusal", "inspectPid"],
  agents: ["launchAgent", "mayRetireAgent", "retireIdleAgent", "launchRecordPath", "readLaunchRecordFile", "writeLaunchRecordFile", "agentLeader"],
  deprecated: ["harnessLeader", "launchHarness", "mayRetireHarness", "retireIdleHarness"],
  generation: ["childProcessSource", "GenerationError", "GenerationTable", "isCurrentGeneration"],
};

async function exportsOf(specifier: string): Promise<string[]> {
  const { stdout } = await run(process.execPath, ["--input-type=module", "-e", `console.log(JSON.stringify(Object.keys(await import(${JSON.stringify(specifier)}))))`], { cwd: ROOT });
  return (JSON.parse(stdout) as string[]).sort();
}

describe("the package's public API", () => {
  it("is exactly the names lib/mod.ts promises, each named there", async () => {
    const names = await exportsOf("outlive");
    expect(names).toEqual(Object.values(PUBLIC).flat().sort());
    console.log(`test/package/exports: ${names.length} runtime exports`);
    // Named one by one: no `export *` that would make every helper of a folder a promise.
    const mod = readFileSync(`${ROOT}/lib/mod.ts`, "utf8");
    expect(mod).not.toMatch(/export \*/);
    for (const name of names) expect(mod, name).toMatch(new RegExp(`\\b${name}\\b`));
  });

  it("keeps each deprecated alias working, and says so in its doc", async () => {
    const source = readFileSync(`${ROOT}/lib/agent/deprecated.ts`, "utf8");
    for (const name of PUBLIC.deprecated) expect(source).toMatch(new RegExp(`@deprecated[^\\n]*\\n[\\s\\S]*?export const ${name}\\b`));
    const { stdout } = await run(process.execPath, ["--input-type=module", "-e",
      'const m = await import("outlive"); console.log(m.launchHarness === m.launchAgent && m.retireIdleHarness === m.retireIdleAgent && m.mayRetireHarness === m.mayRetireAgent && m.harnessLeader === m.agentLeader)'], { cwd: ROOT });
    expect(stdout.trim()).toBe("true");
  });

  it("leaves the helpers to outlive/internal, which promises nothing", async () => {
    const internal = await exportsOf("outlive/internal");
    const pub = await exportsOf("outlive");
    expect(internal).toEqual(expect.arrayContaining(pub));
    expect(internal).toEqual(expect.arrayContaining(["writeFileAtomic", "parsePsOutput", "npxTitle", "killLadder", "makePlacements"]));
    expect(pub).not.toEqual(expect.arrayContaining(["writeFileAtomic"]));
    expect(readFileSync(`${ROOT}/lib/internal.ts`, "utf8")).toMatch(/NO promise/);
  });
});
