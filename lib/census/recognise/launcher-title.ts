import { baseName } from "./interpreter-name.ts";
import type { ServerSpec } from "../agent-config/server-spec.ts";

/** npx's own switches that take no value and leave npm's process title as it is. */
const NPX_PLAIN_SWITCHES = new Set(["-y", "--yes", "-q", "--quiet", "--silent"]);

/**
 * The process title npm gives a server started through `npx`. npm
 * overwrites its argv with `npm exec <package> <args…>` (its options
 * dropped, NUL padding behind), so the process the harness started no
 * longer shows the configured argv. Null when the config uses an npx
 * option that takes a value (`-p`, `--package`, `-c`) or anything else
 * whose title cannot be known exactly: such a server is then matched only
 * in its exact forms, never by a guess.
 *
 * @example
 * ```ts
 * import { npxTitle } from "./launcher-title.ts";
 * const spec = (args: string[]) => ({ name: "m", source: "x", command: "npx", args });
 * console.log(npxTitle(spec(["-y", "@modelcontextprotocol/server-memory"]))); // "npm exec @modelcontextprotocol/server-memory"
 * console.log(npxTitle(spec(["-p", "a", "b"]))); // null
 * ```
 */
export function npxTitle(server: Pick<ServerSpec, "command" | "args">): string | null {
  if (baseName(server.command) !== "npx") return null;
  let i = 0;
  while (i < server.args.length && NPX_PLAIN_SWITCHES.has(server.args[i])) i++;
  const rest = server.args.slice(i);
  if (rest.length === 0 || rest[0].startsWith("-")) return null;
  return ["npm", "exec", ...rest].join(" ");
}

/**
 * True when `argv` is npm's rewritten title for `server`: the title as its
 * first element and nothing but the empty padding after it.
 *
 * @example
 * ```ts
 * import { argvIsNpxTitle } from "./launcher-title.ts";
 * const s = { name: "m", source: "x", command: "npx", args: ["-y", "pkg"] };
 * console.log(argvIsNpxTitle(["npm exec pkg", "", ""], s), argvIsNpxTitle(["npm exec pkg", "x"], s)); // true false
 * ```
 */
export function argvIsNpxTitle(argv: readonly string[], server: Pick<ServerSpec, "command" | "args">): boolean {
  const title = npxTitle(server);
  if (title === null || argv.length === 0 || argv[0] !== title) return false;
  for (let i = 1; i < argv.length; i++) if (argv[i] !== "") return false;
  return true;
}
