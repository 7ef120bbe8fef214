import { closeSync, openSync, readSync, statSync } from "node:fs";
import { join } from "node:path";
import { controls, openTerminal, readPtyInfo, resizeTerminal } from "../../lib/pty/terminal.ts";
import { readExitMarkerNow } from "../../lib/observe/exit-marker.ts";
import { help, parseFlags } from "../cli/flags.ts";
import { SUPERVISOR_FLAGS, SUPERVISOR_FLAGS_HELP, supervisorOptions } from "../cli/supervisor-flags.ts";
import { terminalTarget } from "../cli/terminal-target.ts";
import { UsageError } from "../cli/usage-error.ts";

/** Ctrl-] (as in telnet): a key no shell binds, so it is safe to take for detaching. */
export const DETACH_KEY = 0x1d;

export const ATTACH_HELP = `usage: outlive attach ID

An interactive session on a PTY task's terminal: your terminal goes to raw mode, keys go
to the task, its output comes to you, and its size follows yours. Ctrl-] detaches and
leaves the task running (exit 0); when the task ends, attach exits with the task's code.
Needs a terminal on stdin and stdout.
${SUPERVISOR_FLAGS_HELP}`;

export async function attachCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseFlags(args, SUPERVISOR_FLAGS);
  if (values.help) return help(ATTACH_HELP);
  if (positionals.length !== 1) throw new UsageError("attach takes exactly one task id");
  if (!process.stdin.isTTY || !process.stdout.isTTY) {
    throw new UsageError(`attach needs a terminal: ${!process.stdin.isTTY ? "stdin" : "stdout"} is not one (use outlive send and outlive logs instead)`);
  }
  const id = positionals[0];
  const { paths, io } = await terminalTarget(supervisorOptions(values), id);
  const stdoutPath = join(io, "stdout");
  const exitPath = join(io, "exit");
  const size = () => ({ cols: process.stdout.columns || 80, rows: process.stdout.rows || 24 });
  const keys = openTerminal(id, paths);
  const out = openSync(stdoutPath, "r");
  // Start at the end: what came before is in `outlive logs`. The resize below makes a full-screen program redraw.
  let offset = statSync(stdoutPath).size;
  const buf = new Uint8Array(65536);
  const pump = () => {
    for (;;) {
      const n = readSync(out, buf, 0, buf.length, offset);
      if (n <= 0) return;
      offset += n;
      process.stdout.write(buf.subarray(0, n));
    }
  };
  return await new Promise<number>((resolve) => {
    let done = false;
    let hungUpAt = 0;
    let pending: Promise<void> = Promise.resolve();
    const finish = (code: number, note: string) => {
      if (done) return;
      done = true;
      clearInterval(timer);
      pump();
      process.stdin.setRawMode(false);
      process.stdin.pause();
      process.stdout.off("resize", onResize);
      closeSync(out);
      keys.close();
      process.stderr.write(`\r\n[outlive: ${note}]\r\n`);
      resolve(code);
    };
    const onResize = () => void resizeTerminal(id, paths, size()).catch(() => {});
    process.stdin.setRawMode(true);
    process.stdin.on("data", (chunk: Uint8Array) => {
      const at = chunk.indexOf(DETACH_KEY);
      const typed = at === -1 ? chunk : chunk.subarray(0, at);
      // Keys are written in the order they came: each waits for the one before.
      const sent = (pending = pending.then(() => (typed.length > 0 ? keys.write(typed) : undefined)));
      sent.then(
        () => at !== -1 && finish(0, `detached from ${id}; it runs on`),
        (error) => finish(1, (error as Error).message),
      );
    });
    process.stdout.on("resize", onResize);
    onResize();
    // The output file and the exit marker are the task's own: polled, so this works on every
    // runtime and for a task this process did not start.
    const timer = setInterval(() => {
      pump();
      const marker = readExitMarkerNow(exitPath);
      if (marker.kind === "code") return finish(marker.code, `task ${id} exited with code ${marker.code}`);
      const info = readPtyInfo(paths);
      if (info && controls(info)) return void (hungUpAt = 0);
      // The terminal is gone; the wrapper writes the code a moment after. None by then: it was killed.
      hungUpAt ||= Date.now();
      if (Date.now() - hungUpAt > 1000) finish(1, `task ${id} ended without an exit code (killed)`);
    }, 15);
  });
}
