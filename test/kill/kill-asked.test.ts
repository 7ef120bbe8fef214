import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { taskPaths } from "../../lib/store/layout.ts";
import { CLI, outliveCliAwaited, tempDir } from "../support/cli.ts";
import { fakeSystemctl } from "../support/fake-systemctl.ts";
import { runToEnd } from "../support/run-to-end.ts";
import { asIfSystemdRuns, systemdHostMissing } from "../support/systemd-host.ts";
import { exitCodeWritten, waitFor } from "../support/wait.ts";

/*
 * On a host systemd runs, a TERM from outside makes a task ask whether the host is stopping, so that a
 * shutdown's end says so; where the bus cannot answer, systemctl is asked, for up to 4 s (3 s under the
 * wrapper), past the kill ladder's 2 s grace. The supervisor's own kill makes `io/kill-asked` before its TERM,
 * and the task then asks nothing: its `killing` record says how it ends. Here the CLI runs the task in a mount
 * namespace that looks like such a host (test/support/systemd-host.ts), with a systemctl on PATH that says
 * `stopping` (after 3 s for a kill, past its grace) and leaves a trace of each time it is asked; under the shim
 * and under the wrapper.
 */
const missing = systemdHostMissing();
if (missing) console.log(`test/kill/kill-asked.test.ts skipped: ${missing}`);

const temp = tempDir("outlive-kill-asked-");
const storages: string[] = [];
afterAll(async () => {
  for (const s of storages) await outliveCliAwaited(["stop-all", "--storage", s]);
  temp.remove();
});

const under: [string, string, NodeJS.ProcessEnv][] = [
  ["outlive-shim", "shim", {}],
  ["the shell wrapper", "wrapper", { OUTLIVE_SHIM: "none" }],
];

interface Started {
  storage: string;
  id: string;
  pid: number;
  asked: string;
  env: NodeJS.ProcessEnv;
}

/** `outlive run -- sleep 30` in the namespace, as a host systemd runs would see it; returns once its command runs. */
async function start(name: string, extra: NodeJS.ProcessEnv, answerAfter: number | "never"): Promise<Started> {
  const storage = join(temp.dir, name);
  storages.push(storage);
  const asked = join(temp.dir, `${name}.asked`);
  const env = {
    ...fakeSystemctl(join(temp.dir, `${name}.bin`), `[ "$*" = is-system-running ] || exit 1\necho "$$" >> ${asked}\n${answerAfter === "never" ? "exec sleep 60" : `sleep ${answerAfter}\necho stopping`}`),
    ...extra,
  };
  // The shim's case runs the shim in the wrapper-forced pass of npm test too, as its name says.
  if (extra.OUTLIVE_SHIM === undefined && env.OUTLIVE_SHIM === "none") delete env.OUTLIVE_SHIM;
  const argv = asIfSystemdRuns([process.execPath, "--", CLI, "run", "--storage", storage, "--placement", "process-group", "--json", "--", "sleep", "30"]);
  const run = await runToEnd(argv[0], argv.slice(1), { env, timeoutMs: 60_000 });
  expect(run.status, run.stderr).toBe(0);
  const task = JSON.parse(run.stdout) as { id: string; pid: number };
  // The TERM must find the wrapper's trap set: it is, once the command's subshell wrote its pid.
  await waitFor("the command to run", () => existsSync(taskPaths(storage, task.id).commandPid));
  return { storage, id: task.id, pid: task.pid, asked, env };
}

describe.skipIf(missing !== null)("the supervisor's kill does not ask a host systemd runs whether it is stopping", () => {
  it.for(under)("under %s: a kill's TERM ends the task within the grace with its code, systemctl never asked", { timeout: 120_000 }, async ([, short, extra]) => {
    const t = await start(`kill-${short}`, extra, 3);
    const r = await outliveCliAwaited(["kill", "--storage", t.storage, "--json", t.id], t.env);
    expect(r.code, r.err).toBe(0);
    const { how, task } = JSON.parse(r.out) as { how: string; task: { state: string; exitCode: number | null } };
    expect({ how, ...task }).toMatchObject({ how: "term", state: "killed", exitCode: 143 });
    expect(existsSync(t.asked), "systemctl was asked").toBe(false);
    expect(existsSync(taskPaths(t.storage, t.id).hostStopping)).toBe(false);
    expect(existsSync(taskPaths(t.storage, t.id).killAsked)).toBe(true);
  });

  // The same namespace and systemctl, and a TERM that is no kill of outlive's (a shutdown's, as systemd sends it to
  // the scope): the task asks, and its end says the host's shutdown ended it. What the test above rests on.
  it.for(under)("under %s: a TERM from anyone else is asked about, and the end says the shutdown ended it", { timeout: 120_000 }, async ([, short, extra]) => {
    // An answer well within the wrapper's 3 s bound (the shim's is 4 s), on a busy machine too.
    const t = await start(`shutdown-${short}`, extra, 0.5);
    process.kill(-t.pid, "SIGTERM");
    await waitFor("the exit code", () => exitCodeWritten(t.storage, t.id), 30_000);
    expect(readFileSync(t.asked, "utf8").trim().split("\n")).toHaveLength(1);
    expect(existsSync(taskPaths(t.storage, t.id).hostStopping)).toBe(true);
    expect(existsSync(taskPaths(t.storage, t.id).killAsked)).toBe(false);
    const r = await outliveCliAwaited(["inspect", "--storage", t.storage, "--json", t.id], t.env);
    expect(r.code, r.err).toBe(0);
    const task = JSON.parse(r.out) as { state: string; exitCode: number; reason: string };
    expect(task).toMatchObject({ state: "exited", exitCode: 143 });
    expect(task.reason).toContain("the host's shutdown ended it");
  });

  // What a placement's plan says (a scope's stop timeout less a second) is how long the shim waits: here a
  // process-group placement whose plan says 1500 ms, through the library as built, in the same namespace.
  it("under outlive-shim: the placement's plan sets how long the question is waited for (hostAskMs)", { timeout: 120_000 }, async () => {
    const storage = join(temp.dir, "plan-ask");
    storages.push(storage);
    const asked = join(temp.dir, "plan-ask.asked");
    const env = fakeSystemctl(join(temp.dir, "plan-ask.bin"), `[ "$*" = is-system-running ] || exit 1\necho "$$" >> ${asked}\nexec sleep 60`);
    if (env.OUTLIVE_SHIM === "none") delete env.OUTLIVE_SHIM;
    const lib = pathToFileURL(join(dirname(CLI), "..", "lib", "internal.js")).href;
    const script = [
      `import { ProcessGroupPlacement, Supervisor } from ${JSON.stringify(lib)};`,
      "const pg = new ProcessGroupPlacement();",
      "const plan = pg.plan.bind(pg);",
      "pg.plan = async (task) => ({ ...(await plan(task)), hostAskMs: 1500 });",
      `const sup = await Supervisor.open({ storage: ${JSON.stringify(storage)}, placement: "process-group", placements: { "process-group": pg }, log: () => {} });`,
      'const t = await sup.run({ argv: ["sleep", "30"] });',
      "process.stdout.write(JSON.stringify({ id: t.id, pid: t.pid }));",
      "await sup.close();",
    ].join("\n");
    const argv = asIfSystemdRuns([process.execPath, "--input-type=module", "-e", script]);
    const run = await runToEnd(argv[0], argv.slice(1), { env, timeoutMs: 60_000 });
    expect(run.status, run.stderr).toBe(0);
    const task = JSON.parse(run.stdout) as { id: string; pid: number };
    await waitFor("the command to run", () => existsSync(taskPaths(storage, task.id).commandPid));
    process.kill(-task.pid, "SIGTERM");
    await waitFor("the exit code", () => exitCodeWritten(storage, task.id), 30_000);
    expect(readFileSync(asked, "utf8").trim().split("\n")).toHaveLength(1);
    expect(readFileSync(taskPaths(storage, task.id).hostUnanswered, "utf8")).toBe("no answer within 1500 ms of the TERM\n");
  });

  // The shim alone says when it asked and heard nothing in time (the wrapper takes silence for a no).
  it("under outlive-shim: a TERM from anyone else whose question goes unanswered in time says so in the end's reason", { timeout: 120_000 }, async () => {
    // A silent systemctl (one process: a real one does not fork), which the shim KILLs when its time is up.
    const t = await start("unanswered-shim", {}, "never");
    process.kill(-t.pid, "SIGTERM");
    await waitFor("the exit code", () => exitCodeWritten(t.storage, t.id), 30_000);
    expect(readFileSync(t.asked, "utf8").trim().split("\n")).toHaveLength(1);
    expect(existsSync(taskPaths(t.storage, t.id).hostStopping)).toBe(false);
    expect(readFileSync(taskPaths(t.storage, t.id).hostUnanswered, "utf8")).toBe("no answer within 4000 ms of the TERM\n");
    const r = await outliveCliAwaited(["inspect", "--storage", t.storage, "--json", t.id], t.env);
    expect(r.code, r.err).toBe(0);
    const task = JSON.parse(r.out) as { state: string; exitCode: number; reason: string };
    expect(task).toMatchObject({ state: "exited", exitCode: 143 });
    expect(task.reason).toBe(
      "ended by SIGTERM (exit code 143); a SIGTERM came from outside outlive, and whether the host was shutting down went unanswered (no answer within 4000 ms of the TERM)",
    );
  });
});
