import { choosePlacement, makePlacements } from "../../lib/placement/choose.ts";
import { help, parseFlags } from "../cli/flags.ts";
import { formatTable } from "../cli/table.ts";

export const PROBE_HELP = `usage: outlive probe [--prefix NAME] [--json]

Says, for every placement, whether it works here and why (not), and what auto would choose
in daemon and in standalone mode.
  --prefix NAME   unit and cgroup name prefix (default outlive)
  --json          print JSON`;

export async function probeCommand(args: string[]): Promise<number> {
  const { values } = parseFlags(args, {
    prefix: { type: "string" },
    json: { type: "boolean" },
    help: { type: "boolean", short: "h" },
  }, false);
  if (values.help) return help(PROBE_HELP);
  const placements = makePlacements(values.prefix ?? "outlive", undefined);
  const daemon = await choosePlacement(placements, "auto", "daemon");
  const standalone = await choosePlacement(placements, "auto", "standalone");
  if (values.json) {
    console.log(JSON.stringify({
      probes: daemon.probes,
      auto: { daemon: { name: daemon.placement.name, reason: daemon.reason }, standalone: { name: standalone.placement.name, reason: standalone.reason } },
    }, null, 2));
    return 0;
  }
  console.log(formatTable([["PLACEMENT", "WORKS", "WHY"], ...daemon.probes.map((p) => [p.name, p.ok ? "yes" : "no", p.reason])]));
  console.log(`\nauto, daemon mode:     ${daemon.reason}\nauto, standalone mode: ${standalone.reason}`);
  return 0;
}
