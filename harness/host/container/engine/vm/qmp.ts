import { JsonLineSocket } from "./json-socket.ts";

/**
 * qemu's machine protocol (QMP) on the unix socket in the run's 0700
 * directory: the way to end or reset the machine from outside. Not the human
 * monitor (HMP), which can run host commands; nothing else listens.
 *
 * @example
 * ```ts
 * import { qmpCommand } from "./qmp.ts";
 * await qmpCommand("/root/.cache/outlive/runs/NAME/sockets/qmp.sock", "quit", 5_000);
 * ```
 */
export async function qmpCommand(path: string, execute: string, timeoutMs: number, args?: Record<string, unknown>): Promise<unknown> {
  const socket = await JsonLineSocket.open(path, timeoutMs);
  try {
    // The greeting comes unasked; capabilities negotiation must be answered before any command.
    await socket.exchange(`${JSON.stringify({ execute: "qmp_capabilities" })}\n`, (m) => "return" in m || "error" in m, timeoutMs);
    const m = await socket.exchange(`${JSON.stringify(args ? { execute, arguments: args } : { execute })}\n`, (m) => "return" in m || "error" in m, timeoutMs).catch((error: Error) => {
      // `quit` may close the socket before its answer is read: that is the answer.
      if (execute === "quit" && socket.closed) return { return: {} } as Record<string, unknown>;
      throw error;
    });
    if (m.error) throw new Error(`qmp ${execute}: ${JSON.stringify(m.error)}`);
    return m.return;
  } finally {
    socket.close();
  }
}
