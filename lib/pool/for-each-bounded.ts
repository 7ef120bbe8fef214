/**
 * Runs `fn` over every item with at most `concurrency` running at once,
 * in order of the items. Resolves when all are done; the first failure rejects.
 *
 * @example
 * ```ts
 * import { forEachBounded } from "./for-each-bounded.ts";
 * await forEachBounded([1, 2, 3], 2, async (n) => console.log(n));
 * ```
 */
export async function forEachBounded<T>(items: readonly T[], concurrency: number, fn: (item: T, index: number) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      await fn(items[i], i);
    }
  };
  await Promise.all(Array.from({ length: Math.max(0, Math.min(concurrency, items.length)) }, worker));
}
