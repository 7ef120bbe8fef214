import { execFileSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * vitest globalSetup: tests run the compiled CLI and module (dist/), the
 * bundled CLI (dist/cli/) and the bundled library the package's "." export
 * names (dist/pkg/, which the harness's module imports as "outlive"), so they
 * are built once before any test, unless
 * the caller already built them
 * (`npm test` does, and sets OUTLIVE_BUILT=1).
 */
export default function build(): void {
  if (process.env.OUTLIVE_BUILT === "1") return;
  const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
  execFileSync(process.execPath, [join(root, "node_modules/typescript/bin/tsc"), "-p", join(root, "tsconfig.json")], { stdio: "inherit" });
  // The installed `outlive` runs the bundled CLI (scripts/bundle-cli.ts); tests run it as users do.
  execFileSync(process.execPath, [join(root, "dist/scripts/bundle-cli.js")], { stdio: "inherit" });
  execFileSync(process.execPath, [join(root, "dist/scripts/bundle-lib.js")], { stdio: "inherit" });
}
