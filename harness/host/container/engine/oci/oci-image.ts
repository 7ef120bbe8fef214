import { createHash } from "node:crypto";
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCommand } from "../../command.ts";
import { ContainerError } from "../../errors.ts";
import { engineEnv, ociBinary, type OciEngine } from "./oci-engine.ts";
import type { ResolvedOptions } from "../../options.ts";
import { ensureRootfs, type Log } from "../../image/rootfs.ts";

/** Tags the harness owns; anything else in the engine's store is left alone. */
const BASE_REPO = "localhost/outlive-rootfs";
const TEST_REPO = "localhost/outlive-test";

/** The files the image is built from (the build context holds only these). */
const CONTEXT_FILES = ["Containerfile", "rootfs-setup.sh"] as const;

/** Pure: the image tag for a rootfs hash and the Containerfile's text, so editing either builds anew. */
export function testImageTag(suite: string, rootfsHash: string, containerfile: string): string {
  const hash = createHash("sha256").update(rootfsHash).update(containerfile).digest("hex").slice(0, 12);
  return `${TEST_REPO}:${suite}-${hash}`;
}

async function engineRun(engine: OciEngine, options: ResolvedOptions, argv: string[], timeoutMs: number, input?: string) {
  return runCommand([ociBinary(engine, options), ...argv], { timeoutMs, env: engineEnv(engine, options.projectDir), input });
}

function lastLine(text: string): string {
  return text.trim().split("\n").at(-1) ?? "";
}

/**
 * The image the scenarios boot, built with no registry: the cached
 * debootstrap rootfs (the one nspawn boots) is imported as the base, then
 * container/Containerfile is built on it with the network off. Kept (it is
 * the cache); older harness tags of the same suite are removed so images
 * do not pile up as the recipe changes.
 */
export async function ensureOciImage(engine: OciEngine, options: ResolvedOptions, log: Log): Promise<string> {
  const rootfs = await ensureRootfs(options, log);
  const containerfile = readFileSync(join(options.projectDir, "container", "Containerfile"), "utf8");
  const tag = testImageTag(options.suite, rootfs.hash, containerfile);
  if ((await engineRun(engine, options, ["image", "inspect", "--format", "{{.Id}}", tag], 15_000)).exitCode === 0) return tag;

  const started = Date.now();
  const base = `${BASE_REPO}:${options.suite}-${rootfs.hash}`;
  // tar streams the tree into the engine: no temp archive of the 250 MB rootfs on disk.
  const imported = await runCommand(
    ["sh", "-c", 'tar -C "$1" --numeric-owner -c . | "$2" import - "$3"', "sh", rootfs.rootfs, ociBinary(engine, options), base],
    { timeoutMs: options.buildTimeoutMs, env: engineEnv(engine, options.projectDir) },
  );
  if (imported.exitCode !== 0) {
    throw new ContainerError("build-failed", `${engine} import of ${rootfs.rootfs} failed: ${lastLine(imported.stderr)}`);
  }
  const context = mkdtempSync(join(tmpdir(), "outlive-image-"));
  try {
    for (const file of CONTEXT_FILES) copyFileSync(join(options.projectDir, "container", file), join(context, file));
    const build = await engineRun(engine, options, [
      "build",
      "--network=none",
      // One image, no cached intermediate layers left in the store.
      ...(engine === "podman" ? ["--layers=false"] : []),
      "--file", join(context, "Containerfile"),
      "--build-arg", `BASE=${base}`,
      "--build-arg", `USER_NAME=${options.user}`,
      "--build-arg", `USER_UID=${options.uid}`,
      "--tag", tag,
      context,
    ], options.buildTimeoutMs);
    if (build.exitCode !== 0) {
      throw new ContainerError("build-failed", `${engine} build of ${tag} failed (${build.timedOut ? "timed out" : lastLine(`${build.stdout}${build.stderr}`)})`);
    }
  } finally {
    rmSync(context, { recursive: true, force: true });
  }
  // The base only fed the build; its layer lives on inside the test image.
  await engineRun(engine, options, ["rmi", base], 30_000);
  await removeOlderTags(engine, options, tag);
  log(`${engine}: built ${tag} from ${rootfs.rootfs} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return tag;
}

async function removeOlderTags(engine: OciEngine, options: ResolvedOptions, keep: string): Promise<void> {
  const list = await engineRun(engine, options, ["images", "--format", "{{.Repository}}:{{.Tag}}"], 15_000);
  for (const name of list.stdout.split("\n").map((l) => l.trim())) {
    const ours = name.startsWith(`${TEST_REPO}:${options.suite}-`) || name.startsWith(`${BASE_REPO}:${options.suite}-`);
    if (ours && name !== keep) await engineRun(engine, options, ["rmi", name], 30_000);
  }
}
