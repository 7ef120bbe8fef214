import { spawn } from "node:child_process";
import { once } from "node:events";
import { expect, test } from "vitest";
import { processesWithArg } from "../../lib/internal.ts";

test("finds a live process by one of its arguments, whole, and not once it has ended", async () => {
  const arg = `/tmp/outlive-arg-holders-${process.pid}/io/timed-out`;
  const child = spawn("/bin/sh", ["-c", "sleep 30", "outlive-task", arg], { stdio: "ignore" });
  await once(child, "spawn");
  try {
    expect(processesWithArg(arg)).toEqual([child.pid]);
    // A part of an argument is not the argument.
    expect(processesWithArg(arg.slice(0, -1))).toEqual([]);
  } finally {
    child.kill("SIGKILL");
    await once(child, "exit");
  }
  expect(processesWithArg(arg)).toEqual([]);
});
