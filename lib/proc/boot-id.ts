import { readFileSync } from "node:fs";

/**
 * The kernel's boot id; it changes on every boot, so a record whose boot id
 * differs from this one was written before a reboot.
 *
 * @example
 * ```ts
 * import { bootId } from "./boot-id.ts";
 * console.log(bootId().length); // 36
 * ```
 */
export function bootId(): string {
  return readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim();
}
