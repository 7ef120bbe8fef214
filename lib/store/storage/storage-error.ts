import { OutliveError } from "../../errors.ts";

/**
 * What a failed storage operation on `path` throws: an OutliveError as it
 * is (it already says what went wrong), anything else as E_STORAGE naming
 * the path and the errno's message.
 *
 * @example
 * ```ts
 * import { storageError } from "./storage-error.ts";
 * const e = storageError("/s/tasks/t-1/record.json", Object.assign(new Error("ENOSPC: no space left on device"), { code: "ENOSPC" }));
 * console.log(e.code, e.message); // "E_STORAGE" "Cannot write the storage at /s/tasks/t-1/record.json: ENOSPC: no space left on device"
 * ```
 */
export function storageError(path: string, error: unknown): OutliveError {
  if (error instanceof OutliveError) return error;
  return new OutliveError("E_STORAGE", `Cannot write the storage at ${path}: ${(error as Error).message}`, {
    cause: error,
  });
}
