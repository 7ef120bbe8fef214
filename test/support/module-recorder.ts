import { writeFileSync } from "node:fs";
import { join } from "node:path";

/**
 * Writes `dir/record-modules.mjs`, a preload for `node --import` whose
 * resolve hook appends every module URL the process resolves to the file
 * named by OUTLIVE_TEST_MODULES, as a user's own Node would load them.
 * Returns its path.
 */
export function writeModuleRecorder(dir: string): string {
  const recorder = join(dir, "record-modules.mjs");
  writeFileSync(recorder, `
import { register } from "node:module";
register("data:text/javascript," + encodeURIComponent(\`
  import { appendFileSync } from "node:fs";
  export async function resolve(specifier, context, next) {
    const found = await next(specifier, context);
    appendFileSync(process.env.OUTLIVE_TEST_MODULES, found.url + "\\\\n");
    return found;
  }
\`));
`);
  return recorder;
}
