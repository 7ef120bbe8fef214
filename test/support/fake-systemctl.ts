import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/**
 * A `systemctl` standing for the host's, for the tests of what the shim and the wrapper ask at a TERM from
 * outside: `dir/systemctl` runs `body` with sh and, given `trace`, first appends its pid to that file, so a
 * test can tell whether it was run at all. Returns this environment with `dir` first on PATH.
 */
export function fakeSystemctl(dir: string, body: string, trace?: string): NodeJS.ProcessEnv {
  mkdirSync(dir, { recursive: true });
  const path = join(dir, "systemctl");
  writeFileSync(path, `#!/bin/sh\n${trace === undefined ? "" : `echo "$$" >> ${trace}\n`}${body}\n`);
  chmodSync(path, 0o755);
  return { ...process.env, PATH: `${dir}:${process.env.PATH}` };
}
