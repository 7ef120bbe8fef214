#!/usr/bin/env node
// A naive process table, as in field report 3 (NOT outlive): processes kept in
// a map keyed by session id; a spawn under a busy key kills the old process
// and registers the new one; every exit handler looks the key up.
//   stdin:  spawn KEY SHELL…   |   status KEY
//   stdout: ready · spawned KEY PID · KEY exited CODE · status KEY running PID|none · out KEY LINE
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";

const table = new Map();
console.log("ready");

for await (const line of createInterface({ input: process.stdin })) {
  const [op, key, ...rest] = line.split(" ");
  if (op === "status") {
    const child = table.get(key);
    console.log(`status ${key} ${child ? `running ${child.pid}` : "none"}`);
  }
  if (op === "spawn") {
    table.get(key)?.kill("SIGTERM");
    const child = spawn("bash", ["-c", rest.join(" ")], { stdio: ["ignore", "pipe", "inherit"] });
    table.set(key, child);
    createInterface({ input: child.stdout }).on("line", (l) => console.log(`out ${key} ${l}`));
    // The bug: whichever process ends, the handler acts on whatever holds the key now.
    child.on("close", (code, signal) => {
      console.log(`${key} exited ${code ?? 128 + (signal === "SIGTERM" ? 15 : 9)}`);
      table.delete(key);
    });
    console.log(`spawned ${key} ${child.pid}`);
  }
}
