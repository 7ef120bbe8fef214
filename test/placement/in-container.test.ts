/**
 * The placement suites (conformance + systemd-scope + the spawner) inside the systemd
 * container, where systemd-scope really works: bookworm (systemd 252) and
 * trixie (257), as the lingering user with its user manager, and as root
 * with the system manager. One boot per suite. Skipped with the reason
 * where no container can be booted here.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bootContainer, cannotRunHereReason, ContainerError, type ContainerHandle, type Suite } from "../../harness/host/container/mod.ts";

const missing = await cannotRunHereReason();
if (missing) console.log(`in-container placement tests skipped: ${missing}`);

const FILES = ["test/placement/conformance.test.ts", "test/placement/systemd-scope.test.ts", "test/spawner/spawner.test.ts"];
const REPORT = "/tmp/outlive-placement-report.json";

interface AssertionResult {
  ancestorTitles: string[];
  title: string;
  fullName: string;
  status: string;
  failureMessages: string[];
}
interface JsonReport {
  numFailedTests: number;
  numPassedTests: number;
  success: boolean;
  testResults: Array<{ name: string; status: string; message: string; assertionResults: AssertionResult[] }>;
}

/** Runs the placement suites inside, as the user or as root, and returns vitest's JSON report. */
async function runSuites(c: ContainerHandle, as: "user" | "root"): Promise<{ report: JsonReport; output: string }> {
  const argv = [
    "/work/project/node_modules/.bin/vitest", "run",
    // The project is root's, bind-mounted: the default config loader writes a bundled config next to node_modules.
    "--configLoader", "runner",
    "--reporter=json", `--outputFile=${REPORT}`,
    ...FILES,
  ];
  const env = { OUTLIVE_BUILT: "1", ...(as === "user" ? { XDG_RUNTIME_DIR: `/run/user/${c.info.uid}` } : {}) };
  const r = await c.exec(argv, { user: as === "user", env, cwd: "/work/project", timeoutMs: 240_000 });
  const json = await c.exec(["cat", REPORT], { user: as === "user" });
  await c.exec(["rm", "-f", REPORT], { user: as === "user" });
  if (json.exitCode !== 0) throw new Error(`no JSON report (vitest exit ${r.exitCode}):\n${r.stdout.slice(-4000)}\n${r.stderr.slice(-4000)}`);
  return { report: JSON.parse(json.stdout) as JsonReport, output: r.stdout + r.stderr };
}

function systemdCases(report: JsonReport): AssertionResult[] {
  return report.testResults.flatMap((f) => f.assertionResults).filter((a) =>
    a.ancestorTitles.some((t) => t === "placement systemd-scope" || t.startsWith("systemd-scope against systemd") || t === "spawner under systemd-scope"));
}

function summary(report: JsonReport): string {
  return report.testResults
    .flatMap((f) => [f.message ? `${f.name}: ${f.message}` : "", ...f.assertionResults.map((a) => `${a.status.padEnd(8)} ${a.fullName}${a.failureMessages.length ? `\n  ${a.failureMessages[0].split("\n")[0]}` : ""}`)])
    .filter(Boolean)
    .join("\n");
}

for (const suite of ["bookworm", "trixie"] as Suite[]) {
  describe.skipIf(missing !== null)(`placement suites in a ${suite} container`, () => {
    let container: ContainerHandle | undefined;
    let bootSkip: string | null = null;

    beforeAll(async () => {
      try {
        container = await bootContainer({ suite, engine: "nspawn" });
      } catch (error) {
        if (error instanceof ContainerError && error.cannotRunHere) {
          bootSkip = error.message;
          console.log(`in-container placement tests (${suite}) skipped: ${bootSkip}`);
          return;
        }
        throw error;
      }
      // The debootstrap root has no /etc/hosts, and vitest's server resolves "localhost". The root is a volatile overlay.
      await container.shell("grep -qs localhost /etc/hosts || printf '127.0.0.1 localhost\\n::1 localhost\\n' >> /etc/hosts");
    }, 20 * 60_000);

    afterAll(async () => {
      if (container) {
        const report = await container.teardown();
        expect(report.leftovers ?? []).toEqual([]);
      }
    }, 60_000);

    for (const as of ["user", "root"] as const) {
      const managerWord = as === "user" ? "user manager" : "system manager";
      it(`passes with systemd-scope running for real (${as}, ${managerWord})`, async (ctx) => {
        if (!container) return ctx.skip();
        const { report } = await runSuites(container, as);
        const cases = systemdCases(report);
        expect(report.numFailedTests, summary(report)).toBe(0);
        expect(report.success, summary(report)).toBe(true);
        // Every systemd-scope case ran and passed: not one skipped because no manager was found.
        expect(cases.length).toBeGreaterThanOrEqual(12);
        expect(cases.filter((a) => a.status !== "passed").map((a) => `${a.status} ${a.fullName}`)).toEqual([]);
        expect(cases.map((a) => a.fullName).join("\n")).toContain(`(${as === "user" ? "user" : "system"} manager)`);
      }, 300_000);
    }
  });
}
