import { unescapeKeys } from "../../lib/pty/escapes.ts";
import { writeTerminal } from "../../lib/pty/terminal.ts";
import { help, parseFlags } from "../cli/flags.ts";
import { SUPERVISOR_FLAGS, SUPERVISOR_FLAGS_HELP, supervisorOptions } from "../cli/supervisor-flags.ts";
import { terminalTarget } from "../cli/terminal-target.ts";
import { UsageError } from "../cli/usage-error.ts";

export const SEND_HELP = `usage: outlive send ID TEXT

Types TEXT into a PTY task's terminal, as if at its keyboard. No newline is added.
Escapes: \\n newline, \\r Enter, \\t tab, \\e Esc, \\\\ backslash, \\xHH a byte, \\cX the control key X
(\\cc Ctrl-C, \\cd Ctrl-D, \\cz Ctrl-Z). Several senders may send at once; each send of up to
4096 bytes arrives whole.
${SUPERVISOR_FLAGS_HELP}`;

export async function sendCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseFlags(args, SUPERVISOR_FLAGS);
  if (values.help) return help(SEND_HELP);
  if (positionals.length !== 2) throw new UsageError("send takes a task id and the text to type");
  const bytes = unescapeKeys(positionals[1]);
  const { paths } = await terminalTarget(supervisorOptions(values), positionals[0]);
  await writeTerminal(positionals[0], paths, bytes);
  return 0;
}
