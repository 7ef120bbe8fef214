import { checkPtySize } from "../../lib/pty/size.ts";
import { resizeTerminal } from "../../lib/pty/terminal.ts";
import { help, number, parseFlags } from "../cli/flags.ts";
import { SUPERVISOR_FLAGS, SUPERVISOR_FLAGS_HELP, supervisorOptions } from "../cli/supervisor-flags.ts";
import { terminalTarget } from "../cli/terminal-target.ts";
import { UsageError } from "../cli/usage-error.ts";

export const RESIZE_HELP = `usage: outlive resize ID COLS ROWS

Sets the size of a PTY task's terminal (each side 1 to 10000); its program gets SIGWINCH.
${SUPERVISOR_FLAGS_HELP}`;

export async function resizeCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseFlags(args, SUPERVISOR_FLAGS);
  if (values.help) return help(RESIZE_HELP);
  if (positionals.length !== 3) throw new UsageError("resize takes a task id, COLS and ROWS");
  const size = checkPtySize({ cols: number("COLS", positionals[1]), rows: number("ROWS", positionals[2]) }, "size");
  const { paths } = await terminalTarget(supervisorOptions(values), positionals[0]);
  const done = await resizeTerminal(positionals[0], paths, size);
  if (values.json) console.log(JSON.stringify(done));
  return 0;
}
