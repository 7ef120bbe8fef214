import { realpathSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { scenarioCli } from "./cli.ts";

/**
 * Lets each scenario file run on its own, zx-script style:
 * `node dist/harness/scenarios/restart-adopt.js [--systemd 257]`, exit code
 * = verdict. Does nothing when the file is imported (by the driver inside
 * the container, or by the runner).
 *
 * Not awaited by the caller, and started on the next turn: the runner
 * imports the scenario file again to read it, and that import must not wait
 * on a module still busy evaluating (a top-level await here would deadlock).
 */
export function runIfMain(moduleUrl: string, name: string): void {
  const main = process.argv[1];
  if (!main) return;
  try {
    if (realpathSync(main) !== realpathSync(fileURLToPath(moduleUrl))) return;
  } catch {
    return;
  }
  setImmediate(() => {
    void scenarioCli([name, ...process.argv.slice(2)]).then((code) => (process.exitCode = code));
  });
}
