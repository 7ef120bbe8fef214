import { realpathSync } from "node:fs";
import { fileURLToPath } from "node:url";

/**
 * Lets each case file run on its own, zx-script style:
 * `node dist/harness/cases/restart-adopt.js [--systemd 257]`, exit code
 * = verdict. Does nothing when the file is imported (by the driver inside
 * the container, or by the runner).
 *
 * The runner is imported only when the file is the main module: a case is
 * loaded by the driver inside the container, which must never load the
 * host side (engines, reports) with it.
 *
 * Not awaited by the caller, and started on the next turn: the runner
 * imports the case file again to read it, and that import must not wait
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
    void import("../host/cli.ts")
      .then(({ scenarioCli }) => scenarioCli([name, ...process.argv.slice(2)]))
      .then((code) => (process.exitCode = code));
  });
}
