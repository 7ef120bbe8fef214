import { readFileSync } from "node:fs";
import { join } from "node:path";

/**
 * A file of a task's cgroup as a scenario reports it: its text, or why it
 * could not be read (a scope's cgroup goes the moment it empties, and the
 * check that reads it says what it found either way).
 */
export function cgroupFile(dir: string, name: string): string {
  try {
    return readFileSync(join(dir, name), "utf8").trim();
  } catch (error) {
    return `(unreadable: ${(error as Error).message})`;
  }
}
