import type { RebootHow } from "../../machine.ts";
import { consoleLines } from "./qemu.ts";

/**
 * How long a rebooting guest's console may stay silent before the boot is
 * taken for stalled. A healthy boot under TCG, two guests on two busy cores,
 * was silent for at most 8 s at a time (measured across a power cut of each
 * suite side by side); a boot that hangs never speaks again. None has been
 * seen for sure: CI's two reboots that never came back had booted, and it was
 * the agent's channel that had gone deaf (see VmMachine.dropAgentIfDeaf).
 * This is the backstop for a kernel that does hang under a loaded TCG.
 */
export const STALL_MS = 45_000;
/** Resets sent after the first, at most, before the reboot is given up on. */
export const MAX_EXTRA_RESETS = 2;

export interface RebootProgress {
  how: RebootHow;
  /** The console written since the reboot was sent. */
  consoleSince: string;
  /** Since when the console has not grown (epoch ms). */
  quietSince: number;
  now: number;
  /** Resets sent after the first so far. */
  extraResets: number;
}

/**
 * Pure: what to do about a reboot whose guest has not answered from its new
 * boot yet. `wait` while the console speaks (or has been quiet less than
 * STALL_MS, or its boot got as far as the guest agent); `reset` once it has
 * been quiet that long after the new kernel began (a power cut may be repeated: nothing of outlive's has run in the
 * new boot yet, and the old boot's writes were already cut off); `give-up`
 * once the resets are spent. A clean reboot is never reset while its
 * shutdown may still run (no new kernel on the console yet): that would
 * turn it into a power cut and its checks would read the wrong end.
 */
export function stallDecision(p: RebootProgress): "wait" | "reset" | "give-up" {
  if (p.now - p.quietSince < STALL_MS) return "wait";
  if (p.how === "clean" && !newKernelBegan(p.consoleSince)) return "wait";
  // A boot that got as far as its guest agent has stalled nowhere: a fully booted guest's console falls silent.
  if (agentStarted(p.consoleSince)) return "wait";
  return p.extraResets < MAX_EXTRA_RESETS ? "reset" : "give-up";
}

/** Whether the last boot on a console got as far as starting its guest agent (systemd's status line). */
export function agentStarted(console: string): boolean {
  const banner = console.lastIndexOf("] Linux version ");
  return /Started .*qemu-guest-agent/.test(banner < 0 ? console : console.slice(banner));
}

/** Whether a console text shows a kernel starting (its banner). */
export function newKernelBegan(console: string): boolean {
  return /^\[\s*0\.0+\] Linux version /m.test(console);
}

/** Pure: the last line the console printed (escapes and timestamps taken off), for a person reading why a boot stalled. */
export function lastConsoleLine(console: string): string {
  return (consoleLines(console).at(-1) ?? "").slice(0, 200);
}
