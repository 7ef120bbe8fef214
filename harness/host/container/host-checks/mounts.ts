import { readFileSync } from "node:fs";
import { runCommand } from "../command.ts";

/** Unescapes the octal escapes (`\040` for a space) that /proc/self/mountinfo uses in paths. */
function unescapeMountPath(text: string): string {
  return text.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8)));
}

/** Mount points at or below `dir`, deepest first, as the host's mount namespace sees them. */
export function mountsUnder(dir: string, mountinfo = readFileSync("/proc/self/mountinfo", "utf8")): string[] {
  const prefix = dir.endsWith("/") ? dir : `${dir}/`;
  const found = mountinfo
    .split("\n")
    .map((line) => line.split(" ")[4])
    .filter((field): field is string => field !== undefined)
    .map(unescapeMountPath)
    .filter((path) => path === dir || path.startsWith(prefix));
  return [...new Set(found)].sort((a, b) => b.length - a.length);
}

/**
 * Unmounts everything below `dir`, deepest first. An interrupted debootstrap
 * leaves /proc and /sys mounted in its target; removing the target without
 * this would walk into the host's /proc and /sys.
 */
export async function unmountUnder(dir: string): Promise<string[]> {
  const left: string[] = [];
  for (const path of mountsUnder(dir)) {
    const plain = await runCommand(["umount", path], { timeoutMs: 10_000 });
    if (plain.exitCode === 0) continue;
    // A busy mount is detached lazily so the removal can proceed; it is gone once its last user is.
    const lazy = await runCommand(["umount", "--lazy", path], { timeoutMs: 10_000 });
    if (lazy.exitCode !== 0) left.push(path);
  }
  return left;
}

/** Removes a directory tree without crossing into another file system, even if an unmount was missed. */
export async function removeTree(dir: string): Promise<boolean> {
  const left = await unmountUnder(dir);
  if (left.length > 0) return false;
  const rm = await runCommand(["rm", "-rf", "--one-file-system", dir], { timeoutMs: 120_000 });
  return rm.exitCode === 0;
}
