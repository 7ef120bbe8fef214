/**
 * respawn-race (issue 6): the predecessor traps TERM, keeps writing and
 * exits ~600 ms after it was told to stop; the successor is spawned at once
 * under the same key. The successor gets none of the predecessor's output,
 * is never reported exited by the predecessor's late exit, and its own exit
 * is reported once.
 */
import { defineScenario } from "../inside/define-scenario.ts";
import { runIfMain } from "../inside/run-if-main.ts";

const PREDECESSOR = [
  "trap 'i=1; while [ $i -le 6 ]; do echo pred-late $i; i=$((i+1)); sleep 0.1; done; exit 0' TERM",
  "echo pred-up",
  "while :; do echo pred-tick; sleep 0.1; done",
].join("\n");

const scenario = defineScenario({
  name: "respawn-race",
  summary: "a successor under the same key never inherits its draining predecessor's output or exit",
  async inside(ctx) {
    const d = ctx.daemon({ graceMs: 3000 });
    const mod = await d.start();
    await d.run({ id: "pred", key: "session-1", argv: ["bash", "-c", PREDECESSOR] });
    // Its TERM trap is set before it says "pred-up".
    await ctx.waitFor("the predecessor's TERM trap", () => ctx.output("pred").startsWith("pred-up\n"));
    ctx.mark("respawn", "succ spawned under session-1");
    const succ = await d.run({ id: "succ", key: "session-1", shell: "echo succ-up; sleep 2; echo succ-done; exit 5" });
    ctx.check("the successor is generation 2", succ.generation === 2, succ.generation);

    const pred = await ctx.completion(d, "pred", 10_000);
    const succNow = (await mod.request("get", { id: "succ" })).task;
    ctx.check("the predecessor ended killed, superseded by generation 2", pred.state === "killed" && /superseded by generation 2/.test(pred.reason ?? ""), pred);
    ctx.check("the predecessor's TERM trap drained its late output (it ran on after the respawn)", ctx.output("pred").includes("pred-late 6"), ctx.output("pred").slice(-120));
    ctx.check("when the predecessor's exit arrived, the successor still ran", succNow.state === "running", succNow);
    ctx.check("no completion for the successor came with the predecessor's exit", !d.deliveries().some((t) => t.id === "succ"), d.deliveries().map((t) => t.id));

    const done = await ctx.completion(d, "succ", 10_000);
    ctx.check("the successor exited with its own code, 5", done.state === "exited" && done.exitCode === 5, done);
    ctx.check("the successor's output is its own, none of the predecessor's", ctx.output("succ") === "succ-up\nsucc-done\n", ctx.output("succ"));
    await ctx.sleep(500);
    const counts = ["pred", "succ"].map((id) => d.deliveries().filter((t) => t.id === id).length);
    ctx.check("each generation's completion was delivered once", counts[0] === 1 && counts[1] === 1, counts);
    await d.stop("disable");
  },
});
export default scenario;
runIfMain(import.meta.url, scenario.name);
