/**
 * Names a test that blocks its worker's event loop for long (a setup file of every test file). vitest's worker
 * answers its runner over an RPC whose calls time out after 60 s, and a worker blocked longer fails the whole run
 * with `Timeout calling "onTaskUpdate"`, naming no test, though every test passed. A line on stderr names the test
 * that blocked for over BLOCKED_MS, so it can await its commands instead (run-to-end.ts).
 */
import { beforeEach } from "vitest";

/** A third of vitest's bound: what a busy machine may stretch past 60 s. */
const BLOCKED_MS = 20_000;
const TICK_MS = 1_000;

/** The tests of this file as they began: the one that blocked is the first that began after the last tick. */
const began: { name: string; at: number }[] = [];
beforeEach((ctx) => {
  began.push({ name: `${ctx.task.file?.name ?? "?"} › ${ctx.task.name}`, at: Date.now() });
  if (began.length > 64) began.shift();
});

let last = Date.now();
setInterval(() => {
  const now = Date.now();
  // Only a blocked loop delays a 1 s timer by 20 s: a busy machine delays it by a fraction of that.
  if (now - last > BLOCKED_MS) {
    // A test's hooks and body run one after the other with no timer between them, so the block began in the
    // first test that began after the last tick, or in the one already running then.
    const culprit = began.find((t) => t.at >= last) ?? began.at(-1);
    const who = culprit?.name ?? "the file's own code, outside a test";
    process.stderr.write(`blocked-worker: ${who} blocked its worker's event loop for ${((now - last) / 1000).toFixed(1)} s (vitest's RPC bound is 60 s)\n`);
  }
  last = now;
}, TICK_MS).unref();
