import { join } from "node:path";
import { HOST_PREPARATIONS, type HostPreparation, RUST_CLIENT_BUILD_DIR } from "../shared/host-preparation.ts";
import { buildRustClient, rustClientMissing } from "./rust-client.ts";

/** How each preparation is made; each resolves with why it cannot be made here, or null once made. */
const MAKERS: Record<HostPreparation, (root: string) => Promise<string | null>> = {
  "rust-client": async (root) => {
    const missing = rustClientMissing();
    if (missing) return missing;
    await buildRustClient(join(root, RUST_CLIENT_BUILD_DIR));
    return null;
  },
};

/**
 * Makes, on the host, what a scenario names in `prepareOnHost`, in order.
 * Resolves with the first reason one cannot be made here (the scenario is
 * then skipped with it), or null; a name it does not know, or a build that
 * fails, throws (the scenario fails, saying so).
 *
 * @example
 * ```ts
 * import { prepareOnHost } from "./prepare.ts";
 * const why = await prepareOnHost(["rust-client"], process.cwd());
 * console.log(why ?? "built");
 * ```
 */
export async function prepareOnHost(names: readonly string[], root: string): Promise<string | null> {
  if (!Array.isArray(names)) throw new Error(`Expected the \`prepareOnHost\` option to be an array of ${HOST_PREPARATIONS.join(", ")}, got \`${JSON.stringify(names)}\` (${typeof names})`);
  for (const name of names) {
    if (!(HOST_PREPARATIONS as readonly string[]).includes(name)) {
      throw new Error(`Expected each of \`prepareOnHost\` to be one of ${HOST_PREPARATIONS.join(", ")}, got \`${JSON.stringify(name)}\``);
    }
    const why = await MAKERS[name as HostPreparation](root);
    if (why !== null) return why;
  }
  return null;
}
