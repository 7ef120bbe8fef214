/**
 * Field report 2: an idle harness is ended while a dev server runs under it.
 * A naive reaper (bash) ends the harness's group and tree after it idles
 * ("reproduced"); the same reaper asking outlive's census first keeps it
 * while the dev server runs ("pass").
 *
 *   npx outlive scenario run harness/examples/idle-reaper/scenario.ts
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { defineScenario, type ScenarioContext } from "outlive/harness";

const REAPER = fileURLToPath(new URL("./naive-reaper.sh", import.meta.url));
const CENSUS = fileURLToPath(new URL("../../../dist/scripts/outlive.js", import.meta.url));

/** The steps: the reaper starts a harness that starts a dev server it never reports, then idles. */
async function steps(ctx: ScenarioContext, ask: string[]): Promise<void> {
  const devPidFile = join(ctx.runDir, "dev-server.pid");
  // The harness: a shell that starts a dev server in the background (never reporting it), then idles.
  const harness = `node -e 'setInterval(() => {}, 1000)' & echo $! > ${devPidFile}; while :; do sleep 1; done`;
  const d = ctx.daemon({
    module: {
      argv: [REAPER, "2", ...(ask.length > 0 ? ["--ask", ...ask] : []), "--", "bash", "-c", harness],
      ready: { file: devPidFile },
    },
  });
  await d.start();
  const harnessPid = Number((await d.foreign.waitForLine(/^harness \d+$/)).split(" ")[1]);
  await ctx.waitFor("the dev server's pid", () => existsSync(devPidFile) && readFileSync(devPidFile, "utf8").trim() !== "");
  const devPid = Number(readFileSync(devPidFile, "utf8"));
  ctx.fact("pids", { harness: harnessPid, devServer: devPid });
  // Bounded for a reaper that never decides; it decides after 2 idle seconds and one census.
  const said = await d.foreign.waitForLine(/^(retired|kept) /, 60_000);
  ctx.mark("reaper", said);
  await ctx.sleep(500);
  ctx.check("the idle harness is kept while its dev server runs", said.startsWith("kept") && ctx.alive(harnessPid), said);
  ctx.check("the dev server still runs", ctx.alive(devPid), { devPid, reaper: said });
  writeFileSync(join(ctx.runDir, "reaper.log"), d.foreign.lines.join("\n"));
  await d.killModule("the daemon ends the reaper and everything in its cgroup");
}

export default [
  defineScenario({
    name: "idle-reaper-naive",
    summary: "a naive idle reaper ends a harness's group and tree while a dev server runs under it",
    bug: "field report 2: the reaper ends an idle harness without looking at what runs under it",
    inside: (ctx) => steps(ctx, []),
  }),
  defineScenario({
    name: "idle-reaper-census",
    summary: "the same reaper asking outlive's census first keeps the harness while its dev server runs",
    inside: (ctx) => steps(ctx, ["node", CENSUS, "census", "--adopted"]),
  }),
];
