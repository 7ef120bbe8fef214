import { describe, expect, it } from "vitest";
import { agentStarted, lastConsoleLine, MAX_EXTRA_RESETS, newKernelBegan, STALL_MS, stallDecision } from "../../harness/host/container/engine/vm/reboot-stall.ts";

// The tail of a console that hung after a reset, as CI saw it on bookworm (the new kernel began, then nothing).
const HUNG = [
  "[  OK  ] Reached target reboot.target - System Reboot.",
  "[    0.000000] Linux version 6.1.0-41-amd64 (debian-kernel@lists.debian.org) #1 SMP PREEMPT_DYNAMIC Debian 6.1.158-1",
  "[    0.498000] smpboot: x86: Booting SMP configuration:",
  "[    0.044000] calibrate_delay_direct() failed to get a good estimate for loops_per_jiffy.",
  "",
].join("\n");
const SHUTTING_DOWN = "[  OK  ] Stopped target multi-user.target.\n\x1b[0;1;31m*\x1b[0m A stop job is running for user@1000.service\n";

describe("stallDecision", () => {
  const at = (quietMs: number, extraResets = 0, how: "power-cut" | "clean" = "power-cut", consoleSince = HUNG) =>
    stallDecision({ how, consoleSince, quietSince: 1_000_000, now: 1_000_000 + quietMs, extraResets });

  it("waits while the console spoke within the bound", () => {
    expect(at(0)).toBe("wait");
    expect(at(STALL_MS - 1)).toBe("wait");
  });

  it("resets a guest whose console stayed silent that long, until the resets are spent", () => {
    expect(at(STALL_MS)).toBe("reset");
    expect(at(STALL_MS, MAX_EXTRA_RESETS - 1)).toBe("reset");
    expect(at(STALL_MS, MAX_EXTRA_RESETS)).toBe("give-up");
  });

  it("never resets a clean reboot before its new kernel began (the shutdown may still run)", () => {
    expect(at(STALL_MS * 3, 0, "clean", SHUTTING_DOWN)).toBe("wait");
    expect(at(STALL_MS, 0, "clean", HUNG)).toBe("reset");
  });

  it("never resets a boot that got as far as its guest agent (a booted guest's console falls silent; the channel is what failed)", () => {
    const booted = `${HUNG}[  OK  ] Started qemu-guest-agent.service - QEMU Guest Agent.\n[  OK  ] Started user@1000.service - User Manager for UID 1000.\n`;
    expect(at(STALL_MS * 4, 0, "power-cut", booted)).toBe("wait");
    // The agent of the boot before the cut does not count: only the last boot's.
    const before = `[  OK  ] Started qemu-guest-agent.service - QEMU Guest Agent.\n${HUNG}`;
    expect(agentStarted(before)).toBe(false);
    expect(at(STALL_MS, 0, "power-cut", before)).toBe("reset");
  });

  it("a power cut's silent guest is reset even with no kernel banner yet (it hung in the firmware)", () => {
    expect(at(STALL_MS, 0, "power-cut", "")).toBe("reset");
  });
});

describe("the console's words", () => {
  it("finds the kernel's banner only at a line's start with a zero timestamp", () => {
    expect(newKernelBegan(HUNG)).toBe(true);
    expect(newKernelBegan(SHUTTING_DOWN)).toBe(false);
    expect(newKernelBegan("[   12.000000] Linux version 6.1 (a second banner? not a new boot)")).toBe(false);
  });

  it("gives the last line without its timestamp or colours", () => {
    expect(lastConsoleLine(HUNG)).toBe("calibrate_delay_direct() failed to get a good estimate for loops_per_jiffy.");
    expect(lastConsoleLine(SHUTTING_DOWN)).toBe("* A stop job is running for user@1000.service");
    expect(lastConsoleLine("")).toBe("");
  });
});
