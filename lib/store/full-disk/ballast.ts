import { existsSync } from "node:fs";
import { unlink } from "node:fs/promises";
import { storagePaths } from "../layout.ts";
import { isNoSpace, reserveSpace } from "./record-reserve.ts";
import { fileSystemFull } from "./space.ts";

/**
 * Space a storage keeps (`<root>/.ballast`, `bytes` of it) and gives up when
 * a writable open meets a full disk: room for the lock, the incarnation and
 * the records replay writes outside their tasks' own reserves, so a
 * supervisor restarting on a full disk can still take the storage.
 * `checkWritable` is the open's own write check; it is run again once the
 * ballast is gone. Without a ballast to give up, its error stands.
 *
 * @example
 * ```ts
 * import { mkdtempSync, readdirSync, rmSync } from "node:fs";
 * import { tmpdir } from "node:os";
 * import { join } from "node:path";
 * import { withBallast } from "./ballast.ts";
 * const root = mkdtempSync(join(tmpdir(), "outlive-ballast-"));
 * await withBallast(root, 4096, async () => {});
 * console.log(readdirSync(root)); // [".ballast"]
 * rmSync(root, { recursive: true });
 * ```
 */
export async function withBallast(root: string, bytes: number, checkWritable: () => Promise<void>): Promise<void> {
  const ballast = storagePaths(root).ballast;
  const giveUp = () => unlink(ballast).then(() => true, () => false);
  // Given up as soon as the disk is seen full, not only once a write failed: the write check may still fit
  // in the last free block while the lock and the incarnation after it do not.
  let gaveUp = fileSystemFull(root) && (await giveUp());
  try {
    await checkWritable();
  } catch (error) {
    if (!isNoSpace(error) || !(await giveUp())) throw error;
    gaveUp = true;
    await checkWritable();
  }
  // Made again by a later open, never by the one that needed it; where there is no room for it, there is none.
  if (bytes > 0 && !gaveUp && !existsSync(ballast)) {
    try {
      reserveSpace(ballast, bytes);
    } catch {
      // no room: the next open on a full disk fails as it would have
    }
  }
}
