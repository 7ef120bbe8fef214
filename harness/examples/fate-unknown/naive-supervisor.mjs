#!/usr/bin/env node
// A naive supervisor, as in field report 1 (NOT outlive): it starts background
// tasks as its own children, so they share its cgroup, and after a restart it
// replays them from a state file by pid alone.
//   stdin:  run ID SHELL…   |   drain REASON
//   stdout: ready · started ID PID · task ID: <what replay found> · drained
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";

const state = process.argv[2];
mkdirSync(state, { recursive: true });
const table = join(state, "tasks.json");
const tasks = existsSync(table) ? JSON.parse(readFileSync(table, "utf8")) : [];

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

for (const t of tasks) {
  const exit = join(state, `${t.id}.exit`);
  if (existsSync(exit)) console.log(`task ${t.id}: exited ${readFileSync(exit, "utf8").trim()}`);
  else if (alive(t.pid)) console.log(`task ${t.id}: running`);
  else console.log(`task ${t.id}: daemon restarted, process fate unknown`);
}
console.log("ready");

for await (const line of createInterface({ input: process.stdin })) {
  const [op, id, ...rest] = line.split(" ");
  if (op === "drain") {
    console.log("drained");
    process.exit(0);
  }
  if (op === "run") {
    const out = join(state, `${id}.out`);
    const child = spawn("bash", ["-c", `(${rest.join(" ")}) >> '${out}' 2>&1; echo $? > '${join(state, `${id}.exit`)}'`], { detached: true, stdio: "ignore" });
    child.unref();
    tasks.push({ id, pid: child.pid });
    writeFileSync(table, JSON.stringify(tasks));
    console.log(`started ${id} ${child.pid}`);
  }
}
