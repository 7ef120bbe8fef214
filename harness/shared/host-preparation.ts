/**
 * What the host side makes, by name, before a scenario's steps run: the
 * root file systems have no compilers, so a foreign module written in a
 * compiled language is built on the host, into a folder the container
 * sees. A scenario names what it needs (`prepareOnHost`); the host side
 * (harness/host/prepare.ts) knows how, so a case never loads host code.
 *
 * - `rust-client`: examples/clients/rust, built offline with the host's
 *   cargo and Debian's serde_json into RUST_CLIENT_BUILD_DIR; the scenario
 *   skips, with the reason, where there is no cargo or no serde_json.
 *
 * @example
 * ```ts
 * import { join } from "node:path";
 * import { defineScenario } from "./define.ts";
 * import { RUST_CLIENT_BUILD_DIR } from "./host-preparation.ts";
 * import { projectRoot } from "./project-root.ts";
 * export default defineScenario({
 *   name: "rust-tool",
 *   summary: "a module written in Rust",
 *   prepareOnHost: ["rust-client"],
 *   async inside(ctx) {
 *     const bin = join(projectRoot(), RUST_CLIENT_BUILD_DIR, "target", "release", "sidecar-supervisor");
 *     ctx.check("built on the host", (await ctx.$`test -x ${bin}`.nothrow()).exitCode === 0, bin);
 *   },
 * });
 * ```
 */
export const HOST_PREPARATIONS = ["rust-client"] as const;

export type HostPreparation = (typeof HOST_PREPARATIONS)[number];

/** Where `rust-client` builds, below the project root: ignored by git, seen by the container through the project's bind. */
export const RUST_CLIENT_BUILD_DIR = "examples/clients/rust/target/scenario";
