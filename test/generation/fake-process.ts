// A deterministic process handle for tests about event ORDER only. Nothing
// runs; the test decides when each "process" writes, exits, closes or fails.
// Real-process behaviour is covered by respawn-race.test.ts.
import type { KillSignal, ProcessHandle, ProcessSink, ProcessSource } from "../../lib/generation/mod.ts";

/** What a fake does the instant it is signalled, synchronously, inside `kill`. */
export type OnKill = "nothing" | "output" | "exit";

export interface FakeSpec {
  key: string;
  onKill?: OnKill;
}

export class FakeProcess implements ProcessHandle {
  readonly kills: KillSignal[] = [];
  /** Called inside `kill`, before the fake reacts: lets a test look at the table at that instant. */
  onSignal: (fake: FakeProcess) => void = () => {};

  constructor(
    readonly pid: number,
    readonly spec: FakeSpec,
    readonly sink: ProcessSink,
  ) {}

  kill(signal: KillSignal): boolean {
    this.kills.push(signal);
    this.onSignal(this);
    if (this.spec.onKill === "output") this.sink.output("stdout", `late output of pid ${this.pid}`);
    if (this.spec.onKill === "exit") this.sink.exit(null, String(signal));
    return true;
  }
}

export class FakeSource implements ProcessSource<FakeSpec> {
  readonly started: FakeProcess[] = [];
  #nextPid = 1000;
  /** Called for every new fake before `start` returns. */
  onStart: (fake: FakeProcess) => void = () => {};

  start(spec: FakeSpec, sink: ProcessSink): FakeProcess {
    const fake = new FakeProcess(this.#nextPid++, spec, sink);
    this.started.push(fake);
    this.onStart(fake);
    return fake;
  }
}
