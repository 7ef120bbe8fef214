/** The last path component; for `/usr/bin/node` that is `node`. */
export function baseName(path: string): string {
  return path.slice(path.lastIndexOf("/") + 1);
}

const VERSION = /^\d+(?:\.\d+)*$/;

/**
 * True when `program` is one of the listed interpreters as distributions
 * install them: the bare name (`python`), or the name followed by a version
 * (`python3`, `python3.11`, `node20`, `perl5.36.0`), in any folder. Any
 * other suffix (`python-config`, `node_exporter`) is not an interpreter.
 *
 * @example
 * ```ts
 * import { isInterpreter } from "./interpreter-name.ts";
 * const list = ["node", "python"];
 * console.log(isInterpreter("/usr/bin/python3.11", list), isInterpreter("node20", list)); // true true
 * console.log(isInterpreter("python3-config", list), isInterpreter("nodemon", list)); // false false
 * ```
 */
export function isInterpreter(program: string, interpreters: readonly string[]): boolean {
  const name = baseName(program);
  for (const interpreter of interpreters) {
    if (name === interpreter) return true;
    if (name.startsWith(interpreter) && VERSION.test(name.slice(interpreter.length))) return true;
  }
  return false;
}
