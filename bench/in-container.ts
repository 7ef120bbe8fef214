/**
 * The host half of a benchmark that must run inside the systemd container:
 * boot one container per suite, run the compiled bench there (as the
 * lingering user, with its user manager, or as root), print what it
 * printed, tear down. The project is bound at /work/project inside.
 */
import { bootContainer, cannotRunHereReason, type Suite } from "../harness/host/container/mod.ts";

export async function runBenchInContainer(suite: Suite, script: string, args: string[], as: "user" | "root"): Promise<number> {
  const missing = await cannotRunHereReason();
  if (missing) {
    console.log(`${script}: cannot boot the ${suite} container here: ${missing}`);
    return 77;
  }
  const c = await bootContainer({ suite, engine: "nspawn" });
  try {
    const r = await c.exec(["node", `/work/project/dist/bench/${script}`, ...args], {
      user: as === "user",
      env: as === "user" ? { XDG_RUNTIME_DIR: `/run/user/${c.info.uid}` } : {},
      timeoutMs: 600_000,
    });
    process.stdout.write(`--- inside ${suite} (systemd ${c.info.readiness.systemdVersion}), as ${as}:\n${r.stdout}`);
    if (r.stderr.trim()) process.stderr.write(r.stderr);
    return r.exitCode;
  } finally {
    const report = await c.teardown();
    if (!report.clean) console.error(`teardown of ${c.info.name} left: ${JSON.stringify(report.leftovers)}`);
  }
}

/** `bookworm,trixie` → suites, refusing anything else. */
export function parseSuites(value: string): Suite[] {
  const suites = value.split(",").filter(Boolean);
  for (const s of suites) if (s !== "bookworm" && s !== "trixie") throw new Error(`--container: expected bookworm and/or trixie, got ${JSON.stringify(s)}`);
  return suites as Suite[];
}
