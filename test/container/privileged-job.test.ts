import { describe, expect, it } from "vitest";
import { runInJobContainer } from "../../harness/host/container/host-checks/job.ts";
import { engineMissing } from "../../harness/host/container/host-checks/preflight.ts";

/**
 * The GitLab privileged-job shape, made with podman: PID 1 of the job is not
 * systemd, the job installs what the harness needs (container/install-deps.sh,
 * with apt from Debian's mirror) and boots the nested nspawn container.
 */
const missing = await engineMissing("podman");
if (missing) console.log(`test/container: skipping the privileged job container: ${missing}`);

describe.skipIf(missing !== null)("a privileged job container without systemd", () => {
  it("installs the harness's packages and passes a scenario in a nested systemd container", async () => {
    const r = await runInJobContainer(
      [
        "echo \"pid1=$(cat /proc/1/comm)\"",
        "sh container/install-deps.sh >/dev/null",
        "node dist/harness/run-scenarios.js restart-adopt --systemd 252 --engine nspawn",
      ].join(" && "),
      { suite: "bookworm", timeoutMs: 15 * 60_000 },
    );
    expect(r.stdout).toContain("pid1=bash");
    expect(r.stdout).toMatch(/^restart-adopt +bookworm +252 +pass/m);
    expect(r.exitCode, r.stdout + r.stderr).toBe(0);
    expect(r.leftovers).toEqual([]);
  }, 20 * 60_000);
});
