import { reportError } from "./exit-codes.ts";

/**
 * Runs `act` for every id in the order given, one after the other. An id
 * that fails gets its own error line (or JSON object) on stderr and the
 * others still run; the exit code is the first failure's (usage 2, no such
 * task 1, …), else 0.
 */
export async function forEachId(where: string, ids: string[], json: boolean, act: (id: string) => Promise<void>): Promise<number> {
  let code = 0;
  for (const id of ids) {
    try {
      await act(id);
    } catch (error) {
      const failed = reportError(where, error, json);
      code ||= failed;
    }
  }
  return code;
}
