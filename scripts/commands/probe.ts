import { probe } from "../../lib/placement/probe.ts";
import { help, parseFlags } from "../cli/flags.ts";
import { formatTable } from "../cli/table.ts";

export const PROBE_HELP = `usage: outlive probe [--prefix NAME] [--json]

Says, for every placement, whether it works here and why (not), which of the cgroup v2
controllers that limits need it has (LIMITS: memory for run's memory limit, cpu for its CPU
limit, pids for its process limit), what auto would choose in daemon and in standalone mode, and whether tasks run under
outlive-shim or the shell wrapper.
  --prefix NAME   unit and cgroup name prefix (default outlive)
  --json          print JSON`;

export async function probeCommand(args: string[]): Promise<number> {
  const { values } = parseFlags(args, {
    prefix: { type: "string" },
    json: { type: "boolean" },
    help: { type: "boolean", short: "h" },
  }, false);
  if (values.help) return help(PROBE_HELP);
  const here = await probe({ prefix: values.prefix ?? "outlive" });
  if (values.json) {
    console.log(JSON.stringify(here, null, 2));
    return 0;
  }
  // Which limits a task can have there: --memory-max needs memory, --cpu cpu, --pids pids.
  const controllers = (c: string[] | null) => (c === null ? "-" : c.filter((n) => ["memory", "cpu", "pids"].includes(n)).join(",") || "none");
  console.log(formatTable([["PLACEMENT", "WORKS", "LIMITS", "WHY"], ...here.probes.map((p) => [p.name, p.ok ? "yes" : "no", controllers(p.controllers), p.reason])]));
  console.log(`\nauto, daemon mode:     ${here.auto.daemon.reason}\nauto, standalone mode: ${here.auto.standalone.reason}`);
  console.log(`tasks run under:       ${here.shim.why}`);
  return 0;
}
