import { describe, expect, it } from "vitest";
import { OutliveError } from "../../lib/errors.ts";
import { GenerationError, GenerationTable, type GenerationEvents } from "../../lib/generation/mod.ts";
import { FakeSource, type FakeSpec } from "./fake-process.ts";

type Log = Array<[keyof GenerationEvents, number, unknown?]>;

function setup() {
  const source = new FakeSource();
  const table = new GenerationTable<FakeSpec>(source);
  const log: Log = [];
  table.on("output", (e) => log.push(["output", e.generation, e.data]));
  table.on("exit", (e) => log.push(["exit", e.generation, e.code ?? e.signal ?? e.error?.code]));
  table.on("error", (e) => log.push(["error", e.generation, e.error.code]));
  table.on("superseded", (e) => log.push(["superseded", e.generation, e.by]));
  table.on("retired", (e) => log.push(["retired", e.generation, e.by]));
  return { source, table, log };
}

describe("GenerationTable ordering (fake handles)", () => {
  it("bumps the generation before the predecessor is signalled", () => {
    const { source, table } = setup();
    table.spawn("k", { key: "k" });
    const seen: boolean[] = [];
    source.started[0].onSignal = () => seen.push(table.isCurrent("k", 1));
    table.spawn("k", { key: "k" });
    expect(source.started[0].kills).toEqual(["SIGTERM"]);
    expect(seen).toEqual([false]);
  });

  it("drops output the predecessor writes synchronously inside kill", () => {
    const { source, table, log } = setup();
    table.spawn("k", { key: "k", onKill: "output" });
    table.spawn("k", { key: "k" });
    source.started[1].sink.output("stdout", "mine");
    expect(log).toEqual([["superseded", 1, 2], ["output", 2, "mine"]]);
  });

  it("reports a predecessor that exits inside kill as retired, never as exit", () => {
    const { table, log } = setup();
    table.spawn("k", { key: "k", onKill: "exit" });
    const r = table.spawn("k", { key: "k" });
    expect(r.superseded).toEqual({ generation: 1, pid: 1000, delivered: true });
    expect(log).toEqual([["retired", 1, 2], ["superseded", 1, 2]]);
    expect(table.current("k")?.generation).toBe(2);
  });

  it("settles each generation once, whichever of exit, close, error comes first", () => {
    const { source, table, log } = setup();
    table.spawn("k", { key: "k" });
    const sink = source.started[0].sink;
    sink.close(0, null);
    sink.exit(1, null);
    sink.error(new Error("late"));
    sink.output("stdout", "after the end");
    expect(log).toEqual([["exit", 1, 0]]);
    expect(table.live()).toEqual([]);
  });

  it("stops delivering output to later listeners once an earlier one spawned again", () => {
    const source = new FakeSource();
    const table = new GenerationTable<FakeSpec>(source);
    const seen: string[] = [];
    table.on("output", (e) => {
      seen.push(`first ${e.generation}`);
      if (e.generation === 1) table.spawn("k", { key: "k" });
    });
    table.on("output", (e) => seen.push(`second ${e.generation}`));
    table.spawn("k", { key: "k" });
    source.started[0].sink.output("stdout", "x");
    expect(seen).toEqual(["first 1"]);
    expect(table.current("k")?.generation).toBe(2);
  });

  it("gives every exit listener the final exit, even after one of them spawned again", () => {
    const source = new FakeSource();
    const table = new GenerationTable<FakeSpec>(source);
    const seen: string[] = [];
    table.on("exit", (e) => {
      seen.push(`first ${e.generation}`);
      if (e.generation === 1) expect(table.spawn("k", { key: "k" }).superseded).toBeNull();
    });
    table.on("exit", (e) => seen.push(`second ${e.generation}`));
    table.spawn("k", { key: "k" });
    source.started[0].sink.exit(0, null);
    source.started[1].sink.exit(0, null);
    expect(seen).toEqual(["first 1", "second 1", "first 2", "second 2"]);
  });

  it("delivers a kill asked for while the generation was still being started", () => {
    const source = new FakeSource();
    const table = new GenerationTable<FakeSpec>(source);
    // A badly behaved source that writes synchronously from start(); the
    // listener supersedes generation 1 before its handle exists.
    source.onStart = (fake) => {
      if (fake.pid === 1000) fake.sink.output("stdout", "early");
    };
    table.on("output", () => table.spawn("k", { key: "k" }));
    table.spawn("k", { key: "k" });
    expect(source.started.map((f) => f.kills)).toEqual([["SIGTERM"], []]);
    expect(table.live().map((g) => [g.generation, g.current])).toEqual([[1, false], [2, true]]);
  });

  it("reports a source whose start throws as START_FAILED, after spawn returned", async () => {
    const table = new GenerationTable<null>({
      start() {
        throw new Error("boom");
      },
    });
    const exits: unknown[] = [];
    table.on("exit", (e) => exits.push(e.error?.code));
    const r = table.spawn("k", null);
    expect(r).toMatchObject({ generation: 1, pid: null });
    expect(exits).toEqual([]);
    await Promise.resolve();
    expect(exits).toEqual(["START_FAILED"]);
    expect(table.live()).toEqual([]);
  });

  it("delivers faults of the owner only, and a fault with no listener does not throw", () => {
    const { source, table, log } = setup();
    table.spawn("k", { key: "k" });
    source.started[0].sink.fault(new Error("kill refused"));
    table.spawn("k", { key: "k" });
    source.started[0].sink.fault(new Error("stale"));
    expect(log).toEqual([["error", 1, "PROCESS_FAULT"], ["superseded", 1, 2]]);
    const quiet = new GenerationTable<FakeSpec>(source);
    quiet.spawn("q", { key: "q" });
    expect(() => source.started[2].sink.fault(new Error("nobody listens"))).not.toThrow();
  });

  it("keeps draining predecessors tracked and killable by killAll", () => {
    const { source, table } = setup();
    table.spawn("k", { key: "k" });
    table.spawn("k", { key: "k" });
    source.started[1].sink.exit(0, null);
    expect(table.current("k")).toBeNull();
    expect(table.live()).toEqual([{ key: "k", generation: 1, pid: 1000, current: false, supersededBy: 2 }]);
    table.killAll();
    expect(source.started[0].kills).toEqual(["SIGTERM", "SIGKILL"]);
  });

  it("returns errors as values with a code", () => {
    const { table } = setup();
    const r = table.kill("nobody");
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error.code).toBe("NO_CURRENT");
    expect(() => table.spawn("", { key: "" })).toThrow(expect.objectContaining({ code: "INVALID_KEY" }));
    expect(() => new GenerationTable(new FakeSource(), { supersedeSignal: -1 })).toThrow(GenerationError);
    // One base class for every error outlive throws on purpose.
    expect(() => new GenerationTable(new FakeSource(), { supersedeSignal: -1 })).toThrow(OutliveError);
  });

  it("continues the counter after lastGeneration, so a restart never reuses a number", () => {
    const table = new GenerationTable<FakeSpec>(new FakeSource(), { lastGeneration: 41 });
    expect(table.spawn("k", { key: "k" }).generation).toBe(42);
    expect(() => new GenerationTable(new FakeSource(), { lastGeneration: 1.5 })).toThrow(expect.objectContaining({ code: "INVALID_OPTION" }));
  });

  it("adopts replayed processes in generation order; a spawn then supersedes the adopted owner", () => {
    const source = new FakeSource();
    const table = new GenerationTable<FakeSpec>(source);
    const log: string[] = [];
    table.on("exit", (e) => log.push(`exit ${e.generation}`));
    table.on("retired", (e) => log.push(`retired ${e.generation} by ${e.by}`));
    table.on("output", (e) => log.push(`output ${e.generation}`));
    const kills: string[] = [];
    const handle = (name: string) => ({ pid: null, kill: (signal: unknown) => (kills.push(`${name} ${String(signal)}`), true) });
    const older = table.adopt("k", 5, handle("five"));
    const newer = table.adopt("k", 8, handle("eight"));
    expect(table.adopt("k", 8, handle("again"))).toMatchObject({ ok: false, error: { code: "GENERATION_TAKEN" } });
    if (!older.ok || !newer.ok) throw new Error("adoption refused");
    expect(kills).toEqual([]); // adoption never signals: replay decides
    expect(table.live().map((g) => [g.generation, g.current])).toEqual([[5, false], [8, true]]);
    older.sink.output("stdout", "stale");
    const next = table.spawn("k", { key: "k" });
    expect(next.generation).toBe(9);
    expect(kills).toEqual(["eight SIGTERM"]);
    newer.sink.output("stdout", "stale too");
    older.sink.close(143, null);
    newer.sink.close(null, "SIGTERM");
    source.started[0].sink.output("stdout", "mine");
    source.started[0].sink.close(0, null);
    expect(log).toEqual(["retired 5 by 8", "retired 8 by 9", "output 9", "exit 9"]);
  });
});
