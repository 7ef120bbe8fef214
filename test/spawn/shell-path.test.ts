import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parseRecord, Supervisor } from "../../lib/mod.ts";
import { defaultShellPath } from "../../lib/spawn/shell-path.ts";
import { waitFor } from "../support/wait.ts";

const CLI = join(__dirname, "..", "..", "dist", "scripts", "outlive.js");
const storage = mkdtempSync(join(tmpdir(), "outlive-shell-"));
afterAll(() => {
  outlive("stop-all");
  rmSync(storage, { recursive: true, force: true });
});

function outlive(...args: string[]) {
  const r = spawnSync(process.execPath, [CLI, args[0], "--storage", storage, ...args.slice(1)], { encoding: "utf8", timeout: 30_000 });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

const bash = defaultShellPath();
const noBash = bash.endsWith("/bash") ? null : "bash is not installed here";
if (noBash) console.log(`skipping the bash default tests: ${noBash}`);

describe("the shell a shell task runs in", () => {
  it("refuses a shellPath that cannot be a shell, naming it, before anything is stored", async () => {
    await expect(Supervisor.open({ storage: join(storage, "never"), shellPath: "bash" })).rejects.toThrow(
      'Expected the `shellPath` option to be an absolute path to an executable shell (not an absolute path), got `"bash"` (string)',
    );
    expect(existsSync(join(storage, "never"))).toBe(false);
    const sup = await Supervisor.open({ storage: join(storage, "lib"), log: () => {} });
    try {
      await expect(sup.run({ shell: "true", shellPath: "/no/such/shell" })).rejects.toThrow("(no such file)");
      await expect(sup.run({ argv: ["true"], shellPath: "/bin/sh" })).rejects.toThrow("`shellPath` to be absent for an argv task");
      expect(sup.list()).toHaveLength(0);
    } finally {
      await sup.close();
    }
  });

  it("reads records from before the shell was kept: they ran /bin/sh", () => {
    const parsed = parseRecord(readFileSync(join(__dirname, "..", "store", "fixtures", "shell-record-v1.json"), "utf8"));
    expect(parsed).toMatchObject({ ok: true, record: { command: { shell: "echo old" } } });
  });

  it.skipIf(noBash)("is bash by default, in the record and in ps --json; --shell-path picks another", () => {
    const ran = outlive("run", "--id", "bashed", "--shell", 'echo "$BASH_VERSION" | cut -c1-1');
    expect(ran).toMatchObject({ code: 0 });
    const dashed = outlive("run", "--id", "dashed", "--shell-path", "/bin/sh", "--shell", "echo ${BASH_VERSION:-none}");
    expect(dashed).toMatchObject({ code: 0 });
    for (const id of ["bashed", "dashed"]) expect(outlive("wait", id).code).toBe(0);
    const ps = JSON.parse(outlive("ps", "--json").out);
    expect(ps.tasks.find((t: { id: string }) => t.id === "bashed")).toMatchObject({ state: "exited", shellPath: bash });
    expect(ps.tasks.find((t: { id: string }) => t.id === "dashed")).toMatchObject({ state: "exited", shellPath: "/bin/sh" });
    expect(outlive("logs", "bashed").out).toMatch(/^\d\n$/);
    expect(outlive("logs", "dashed").out).toBe("none\n");
    const record = JSON.parse(readFileSync(join(storage, "tasks", "bashed", "record.json"), "utf8"));
    expect(record.command).toEqual({ shell: 'echo "$BASH_VERSION" | cut -c1-1', shellPath: bash });
  });

  it("under dash (/bin/sh here), a plain EXIT trap does not run on outlive kill: what docs/guide/library.md warns of", async () => {
    const dash = spawnSync("sh", ["-c", "readlink -f /bin/sh"], { encoding: "utf8" }).stdout.trim();
    if (!dash.endsWith("dash")) return console.log(`skipped: /bin/sh is ${dash}, not dash`);
    const trapFile = join(storage, "dash-trap");
    expect(outlive("run", "--id", "dash-trap", "--shell-path", "/bin/sh", "--shell", `trap 'echo ran > ${trapFile}' EXIT; sleep 63`).code).toBe(0);
    const pid = JSON.parse(readFileSync(join(storage, "tasks", "dash-trap", "record.json"), "utf8")).pid;
    await waitFor("`sleep 63` to run", () => spawnSync("pgrep", ["-g", String(pid), "-x", "sleep"]).status === 0);
    expect(JSON.parse(outlive("kill", "dash-trap", "--json").out)).toMatchObject({ how: "term", task: { state: "killed" } });
    expect(existsSync(trapFile)).toBe(false);
    writeFileSync(trapFile, "");
  });
});
