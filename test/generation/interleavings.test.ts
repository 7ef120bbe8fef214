// Property: over random interleavings of spawn, kill, output, exit, close,
// error and fault across several keys and generations, (1) nothing of a
// superseded or settled generation is delivered, and everything of the owner
// is; (2) each generation settles exactly once, as `exit` when it owned its
// key and `retired` when it did not; (3) the table never loses a live
// process. Fake handles on purpose: the property is about event ORDER, and
// fakes can also misbehave synchronously (emit inside kill) as no real
// child does.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { GenerationTable, type ProcessSink, type ProcessSource } from "../../lib/generation/mod.ts";
import { FakeProcess, FakeSource, type FakeSpec, type OnKill } from "./fake-process.ts";

interface Spec extends FakeSpec {
  generation: number;
  respawnFromExit: boolean;
  respawnFromOutput: boolean;
}

type Command =
  | { t: "spawn"; key: number; onKill: OnKill; respawnFromExit: boolean; respawnFromOutput: boolean }
  | { t: "kill"; key: number }
  | { t: "output" | "exit" | "close" | "error" | "fault"; proc: number }
  | { t: "killAll" };

const KEYS = ["a", "b", "c"];

const command: fc.Arbitrary<Command> = fc.oneof(
  fc.record({
    t: fc.constant("spawn" as const),
    key: fc.nat(KEYS.length - 1),
    onKill: fc.constantFrom<OnKill>("nothing", "output", "exit"),
    respawnFromExit: fc.boolean(),
    respawnFromOutput: fc.boolean(),
  }),
  fc.record({ t: fc.constant("kill" as const), key: fc.nat(KEYS.length - 1) }),
  fc.record({ t: fc.constantFrom("output" as const, "exit" as const, "close" as const, "error" as const, "fault" as const), proc: fc.nat(40) }),
  fc.constant({ t: "killAll" as const }),
);

interface Outcome {
  violations: string[];
  /** Output written by a generation that did not own its key: what the table had to drop. */
  staleWrites: number;
  retired: number;
}

/**
 * Runs one interleaving and returns every violation found (empty means the
 * properties hold). `lookUpByKey` breaks the wiring the way the naive app
 * did, routing each process's events to whatever runs under its key now,
 * to show the judge catches it.
 */
function runInterleaving(commands: Command[], lookUpByKey = false): Outcome {
  const violations: string[] = [];
  const fakes = new FakeSource();
  const byGeneration = new Map<number, FakeProcess>();
  // The model: ground truth about the processes, kept by the test itself.
  const owner = new Map<string, number | null>();
  const settled = new Set<number>();
  const expectedEnd = new Map<number, "exit" | "retired">();
  const ends = new Map<number, number>();
  const respawned = new Set<number>();
  let nextGeneration = 1;
  let expectedDeliveries = 0;
  let deliveries = 0;
  let staleWrites = 0;
  let retired = 0;
  const latestSink = new Map<string, ProcessSink>();
  const isOwner = (key: string, generation: number) => owner.get(key) === generation && !settled.has(generation);

  // Every sink call goes through the model first, so the model knows what
  // the table ought to do before the table does it.
  const source: ProcessSource<Spec> = {
    start(spec, own) {
      latestSink.set(spec.key, own);
      const route = () => (lookUpByKey ? latestSink.get(spec.key)! : own);
      const modelled: ProcessSink = {
        output: (stream, data) => {
          if (isOwner(spec.key, spec.generation)) expectedDeliveries++;
          else staleWrites++;
          route().output(stream, data);
        },
        fault: (error) => route().fault(error),
        exit: (code, signal) => {
          settle(spec);
          route().exit(code, signal);
        },
        close: (code, signal) => {
          settle(spec);
          route().close(code, signal);
        },
        error: (error) => {
          settle(spec);
          route().error(error);
        },
      };
      const fake = fakes.start(spec, modelled);
      byGeneration.set(spec.generation, fake);
      fake.onSignal = () => {
        if (table.isCurrent(spec.key, spec.generation) !== isOwner(spec.key, spec.generation)) {
          violations.push(`generation ${spec.generation} was signalled while the table disagreed with the model about its ownership`);
        }
      };
      return fake;
    },
  };
  function settle(spec: Spec): void {
    if (settled.has(spec.generation)) return;
    expectedEnd.set(spec.generation, isOwner(spec.key, spec.generation) ? "exit" : "retired");
    if (owner.get(spec.key) === spec.generation) owner.set(spec.key, null);
    settled.add(spec.generation);
  }

  const table = new GenerationTable<Spec>(source);
  function spawn(key: string, onKill: OnKill, respawnFromExit: boolean, respawnFromOutput: boolean): void {
    const generation = nextGeneration++;
    owner.set(key, generation);
    const result = table.spawn(key, { key, generation, onKill, respawnFromExit, respawnFromOutput });
    if (result.generation !== generation) violations.push(`spawn returned generation ${result.generation}, expected ${generation}`);
  }
  const specOf = (generation: number) => byGeneration.get(generation)?.spec as Spec | undefined;

  // First listener checks and counts; the second may spawn again; the third
  // only checks, and must see nothing once the second has superseded.
  table.on("output", (e) => {
    deliveries++;
    if (!isOwner(e.key, e.generation)) violations.push(`output of non-owner generation ${e.generation} delivered`);
  });
  table.on("output", (e) => {
    const spec = specOf(e.generation);
    if (spec?.respawnFromOutput && !respawned.has(e.generation)) {
      respawned.add(e.generation);
      spawn(e.key, "nothing", false, false);
    }
  });
  table.on("output", (e) => {
    if (!isOwner(e.key, e.generation)) violations.push(`output of generation ${e.generation} reached a later listener after it was superseded`);
  });
  table.on("error", (e) => {
    if (!isOwner(e.key, e.generation)) violations.push(`error of non-owner generation ${e.generation} delivered`);
  });
  const countEnd = (generation: number, kind: "exit" | "retired") => {
    ends.set(generation, (ends.get(generation) ?? 0) + 1);
    if (ends.get(generation) !== 1) violations.push(`generation ${generation} ended ${ends.get(generation)} times`);
    if (expectedEnd.get(generation) !== kind) violations.push(`generation ${generation} ended as ${kind}, expected ${expectedEnd.get(generation)}`);
  };
  table.on("exit", (e) => {
    countEnd(e.generation, "exit");
    if (table.current(e.key) !== null) violations.push(`key ${e.key} was not free inside the exit of generation ${e.generation}`);
    const spec = specOf(e.generation);
    if (spec?.respawnFromExit && !respawned.has(e.generation)) {
      respawned.add(e.generation);
      spawn(e.key, "nothing", false, false);
    }
  });
  table.on("retired", (e) => {
    retired++;
    countEnd(e.generation, "retired");
  });

  function checkTracking(step: string): void {
    const live = table.live().map((g) => g.generation).sort((x, y) => x - y);
    const modelLive = [...byGeneration.keys()].filter((g) => !settled.has(g)).sort((x, y) => x - y);
    if (JSON.stringify(live) !== JSON.stringify(modelLive)) violations.push(`${step}: table tracks ${JSON.stringify(live)}, live are ${JSON.stringify(modelLive)}`);
    for (const key of KEYS) {
      const current = table.current(key)?.generation ?? null;
      if (current !== (owner.get(key) ?? null)) violations.push(`${step}: key ${key} owned by ${current}, model says ${owner.get(key) ?? null}`);
    }
  }

  commands.forEach((c, i) => {
    const step = `step ${i} ${JSON.stringify(c)}`;
    if (c.t === "spawn") spawn(KEYS[c.key], c.onKill, c.respawnFromExit, c.respawnFromOutput);
    else if (c.t === "kill") {
      const key = KEYS[c.key];
      const expected = owner.get(key) ?? null;
      const r = table.kill(key);
      if (r.ok ? r.generation !== expected : expected !== null) violations.push(`${step}: kill hit ${r.ok ? r.generation : "nothing"}, owner is ${expected}`);
    } else if (c.t === "killAll") table.killAll();
    else if (fakes.started.length > 0) {
      const fake = fakes.started[c.proc % fakes.started.length];
      if (c.t === "output") fake.sink.output("stdout", "x");
      else if (c.t === "exit") fake.sink.exit(0, null);
      else if (c.t === "close") fake.sink.close(0, null);
      else if (c.t === "error") fake.sink.error(new Error("failed"));
      else fake.sink.fault(new Error("fault"));
    }
    checkTracking(step);
  });

  // Drain: end everything still running (respawns from exit may start more).
  table.killAll();
  for (let guard = 0; guard < 1000; guard++) {
    const running = fakes.started.find((f) => !settled.has((f.spec as Spec).generation));
    if (running === undefined) break;
    running.sink.close(null, "SIGKILL");
  }
  checkTracking("after drain");
  for (const generation of byGeneration.keys()) {
    if (ends.get(generation) !== 1) violations.push(`generation ${generation} ended ${ends.get(generation) ?? 0} times after drain`);
  }
  if (deliveries !== expectedDeliveries) violations.push(`${deliveries} outputs delivered, ${expectedDeliveries} expected`);
  return { violations, staleWrites, retired };
}

describe("random interleavings of spawn, kill, output, exit, close and error", () => {
  it("deliver nothing stale, settle every generation once, and never lose a live process", () => {
    let staleWrites = 0;
    let retired = 0;
    fc.assert(
      fc.property(fc.array(command, { minLength: 1, maxLength: 60 }), (commands) => {
        const outcome = runInterleaving(commands);
        staleWrites += outcome.staleWrites;
        retired += outcome.retired;
        expect(outcome.violations).toEqual([]);
      }),
      { numRuns: 1000 },
    );
    // Not vacuous: the runs did exercise stale writers and superseded exits.
    expect(staleWrites).toBeGreaterThan(100);
    expect(retired).toBeGreaterThan(100);
  });

  it("the reviewers' hole replayed: the predecessor writes and closes after the successor exited", () => {
    const spawnA = { t: "spawn", key: 0, onKill: "nothing", respawnFromExit: false, respawnFromOutput: false } as const;
    const outcome = runInterleaving([spawnA, spawnA, { t: "exit", proc: 1 }, { t: "output", proc: 0 }, { t: "close", proc: 0 }]);
    expect(outcome.violations).toEqual([]);
    expect(outcome).toMatchObject({ staleWrites: 1, retired: 1 });
  });

  it("the same property fails for events routed by key lookup, as the naive app did", () => {
    const result = fc.check(
      fc.property(fc.array(command, { minLength: 1, maxLength: 60 }), (commands) => runInterleaving(commands, true).violations.length === 0),
      { numRuns: 1000 },
    );
    expect(result.failed).toBe(true);
  });
});
