import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { findCargo } from "../../harness/host/rust-client.ts";
import { runToEnd } from "../support/run-to-end.ts";

// The shim's sources as its promises are kept: formatted, clippy-clean, and every `unsafe` block saying why it
// is sound (`#![deny(clippy::undocumented_unsafe_blocks)]` in main.rs). Debian's cargo has no clippy or rustfmt;
// rustup's has both.
const CRATE = fileURLToPath(new URL("../../shim/", import.meta.url));
const cargo = findCargo();
const scratch = mkdtempSync(join(tmpdir(), "outlive-shim-source-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function has(tool: string): boolean {
  return cargo !== null && spawnSync(cargo, [tool, "--version"], { cwd: CRATE, stdio: "ignore" }).status === 0;
}
const missing = cargo === null ? "no cargo on PATH or in ~/.cargo/bin" : !has("clippy") || !has("fmt") ? `${cargo} has no clippy or no rustfmt (rustup's stable has both)` : null;
if (missing) console.log(`test/shim/source.test.ts skipped: ${missing}`);

/** `cargo clippy` on the crate at `crate`, its build in a folder of its own; cargo's words and status. */
async function clippy(crate: string) {
  // From the crate itself: cargo reads .cargo/config.toml (Debian's crates, offline) from its working directory.
  const run = await runToEnd(cargo as string, ["clippy", "--release", "--offline", "--quiet", "--", "-D", "warnings"], {
    cwd: crate,
    env: { ...process.env, CARGO_TARGET_DIR: join(scratch, "target") },
  });
  return { status: run.status, words: `${run.stdout}${run.stderr}` };
}

describe.skipIf(missing !== null)("the shim's sources", () => {
  it("are as rustfmt writes them", async () => {
    const run = await runToEnd(cargo as string, ["fmt", "--check"], { cwd: CRATE });
    expect(run.stdout, "cargo fmt --check: run `cargo fmt` in shim/").toBe("");
    expect(run.status).toBe(0);
  });

  it("pass clippy, and an unsafe block without a SAFETY comment does not", { timeout: 300_000 }, async () => {
    const ok = await clippy(CRATE);
    expect(ok.words).toBe("");
    expect(ok.status).toBe(0);

    // The same crate with one comment taken out: the lint must refuse it, or the promise above is not checked.
    const copy = join(scratch, "crate");
    for (const part of ["src", ".cargo", "Cargo.toml", "Cargo.lock"]) cpSync(join(CRATE, part), join(copy, part), { recursive: true });
    const sys = join(copy, "src", "sys.rs");
    const text = readFileSync(sys, "utf8");
    const comment = "    // SAFETY: no arguments; getpid cannot fail.\n";
    expect(text).toContain(comment);
    writeFileSync(sys, text.replace(comment, ""));
    const bare = await clippy(copy);
    expect(bare.status).not.toBe(0);
    expect(bare.words).toMatch(/unsafe block missing a safety comment[\s\S]*src\/sys\.rs/);
  });
});
