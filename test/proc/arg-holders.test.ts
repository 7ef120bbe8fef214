import { spawn } from "node:child_process";
import { once } from "node:events";
import { expect, test } from "vitest";
import { processesWithArg } from "../../lib/internal.ts";

test("finds a live process by one of its arguments, whole, and not once it has ended", async () => {
  const arg = `/tmp/outlive-arg-holders-${process.pid}/io/timed-out`;
  // A shell that waits in a builtin `read` on a pipe that stays open, so it forks nothing: a fork holds the same
  // arguments until it execs, and under load one was seen holding them (two holders where one was expected).
  const child = spawn("/bin/sh", ["-c", "read x", "outlive-task", arg], { stdio: ["pipe", "ignore", "ignore"] });
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
