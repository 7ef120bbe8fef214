/** Thrown by `ctx.skip`: the scenario cannot say anything on this machine, and says why. */
export class ScenarioSkip extends Error {
  constructor(readonly reason: string) {
    super(reason);
    this.name = "ScenarioSkip";
  }
}
