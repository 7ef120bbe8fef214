#!/usr/bin/env -S node --
// `--` ends node's own options: Node 20 takes an `--env-file` anywhere on its command line as its own (it reads
// the file into outlive's environment, or exits 9 when there is none), `outlive run --env-file FILE`'s included.
/**
 * The `outlive` command as installed: loads the CLI by a dynamic import, so
 * that a load the system refuses (too few file descriptors under a low
 * `ulimit -n`: Node opens the modules in parallel) ends in one line with
 * the errno and exit 1, not a stack trace. Built, it runs the bundle
 * (dist/cli/, made by scripts/bundle-cli.ts) when the build made one.
 */
import { existsSync } from "node:fs";

/** The bundled CLI (scripts/bundle-cli.ts) beside the built one, when the build made it: a faster start. */
const bundled = new URL("../cli/outlive.js", import.meta.url);

try {
  if (import.meta.url.endsWith(".js") && existsSync(bundled)) await import(bundled.href);
  else await import("./outlive.ts");
} catch (error) {
  const errno = (error as { code?: unknown }).code;
  if (typeof errno !== "string" || !/^E[A-Z0-9]+$/.test(errno)) throw error;
  const hint = errno === "EMFILE" || errno === "ENFILE" ? "; raise the open-file limit (ulimit -n)" : "";
  console.error(`outlive: could not load the CLI: ${(error as Error).message} [${errno}]${hint}`);
  process.exitCode = 1;
}
