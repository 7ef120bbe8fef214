import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { outliveCliAwaited, tempDir } from "../support/cli.ts";

const temp = tempDir("outlive-ps-");
const storage = join(temp.dir, "storage");
// Awaited: the setup and first test blocked the worker 31 s under load (test/support/run-to-end.ts).
const outlive = (...args: string[]) => outliveCliAwaited([args[0], "--storage", storage, ...args.slice(1)]);
const LONG = "echo a-command-line-well-beyond-forty-characters-long; sleep 0.1";

beforeAll(async () => {
  for (const run of [
    ["--id", "live", "--key", "svc", "--", "sleep", "300"],
    ["--id", "done", "--", "sh", "-c", "exit 4"],
    ["--id", "longcmd", "--shell", LONG],
    ["--id", "seen", "--", "true"],
  ]) expect((await outlive("run", ...run)).code).toBe(0);
  for (const id of ["done", "longcmd", "seen"]) await outlive("wait", id);
  expect((await outlive("ack", "seen")).code).toBe(0);
});
afterAll(async () => {
  await outlive("stop-all");
  temp.remove();
});

function rows(text: string): Record<string, string>[] {
  const [header, ...lines] = text.split("\n").filter((l) => l && !l.startsWith("("));
  // Columns start where the header's names start; the cells are padded to them.
  const starts = [...header.matchAll(/\S+/g)].map((m) => ({ name: m[0], at: m.index! }));
  return lines.map((l) => Object.fromEntries(starts.map((s, i) => [s.name, l.slice(s.at, starts[i + 1]?.at ?? undefined).trim()])));
}

describe("outlive ps, for people", () => {
  it("has the columns ID STATE EXIT PID COMMAND TIME KEY PORTS, relative times, a shortened command", async () => {
    const ps = await outlive("ps");
    expect(ps.code, ps.err).toBe(0);
    expect(ps.out.split("\n")[0].split(/\s+/)).toEqual(["ID", "STATE", "EXIT", "PID", "COMMAND", "TIME", "KEY", "PORTS"]);
    const byId = Object.fromEntries(rows(ps.out).map((r) => [r.ID, r]));
    expect(byId.live).toMatchObject({ STATE: "running", EXIT: "-", COMMAND: "sleep 300", KEY: "svc", PORTS: "-" });
    expect(byId.live.TIME).toMatch(/^up \d+(\.\d)?s$/);
    expect(byId.live.PID).toMatch(/^\d+$/);
    expect(byId.done).toMatchObject({ STATE: "exited", EXIT: "4", COMMAND: "sh -c 'exit 4'", KEY: "-" });
    expect(byId.done.TIME).toMatch(/^ran \d+(\.\d)?s, \d+(\.\d)?s ago$/);
    expect(byId.longcmd.COMMAND).toHaveLength(40);
    expect(byId.longcmd.COMMAND.endsWith("…")).toBe(true);
    expect(LONG.startsWith(byId.longcmd.COMMAND.slice(0, 39))).toBe(true);
    expect((await outlive("ps", "--no-trunc")).out).toContain(LONG);
  });

  it("hides finished tasks already acknowledged unless -a, and says how many it hid", async () => {
    const ps = await outlive("ps");
    expect(rows(ps.out).map((r) => r.ID)).not.toContain("seen");
    expect(ps.out).toContain("(1 finished task already acknowledged not shown; ps -a shows it)");
    expect(rows((await outlive("ps", "-a")).out).map((r) => r.ID)).toContain("seen");
    expect(rows((await outlive("ps", "--all")).out).map((r) => r.ID)).toContain("seen");
  });

  it("-q prints only the ids, with the same filters", async () => {
    expect((await outlive("ps", "-q")).out.trim().split("\n").sort()).toEqual(["done", "live", "longcmd"]);
    expect((await outlive("ps", "-qa")).out.trim().split("\n").sort()).toEqual(["done", "live", "longcmd", "seen"]);
    expect((await outlive("ps", "-q", "--state", "running")).out.trim()).toBe("live");
    const both = await outlive("ps", "-q", "--json");
    expect(both.code).toBe(2);
  });

  it("--json lists every task with its old fields unchanged, ISO times, and the new ones beside them", async () => {
    const ps = JSON.parse((await outlive("ps", "--json")).out);
    const byId = Object.fromEntries(ps.tasks.map((t: { id: string }) => [t.id, t]));
    expect(Object.keys(byId).sort()).toEqual(["done", "live", "longcmd", "seen"]);
    for (const field of ["id", "state", "exitCode", "reason", "pid", "startedAt", "finishedAt", "placement", "location", "key", "command", "shellPath", "lastOutputAt", "acknowledgedAt"]) {
      expect(byId.done).toHaveProperty(field);
    }
    expect(byId.done).toMatchObject({ state: "exited", exitCode: 4, command: ["sh", "-c", "exit 4"], shellPath: null, key: null });
    expect(byId.done.finishedAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(typeof byId.done.durationMs).toBe("number");
    expect(byId.live).toMatchObject({ durationMs: null, key: "svc", generation: 1 });
    expect(byId.longcmd).toMatchObject({ command: LONG, shellPath: expect.any(String) });
  });
});
