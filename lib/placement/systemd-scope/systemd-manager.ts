import { execFile } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";

export type ManagerKind = "user" | "system";

/** systemd 254 added `--expand-environment=`; 252 rejects it, and expands `$` in a transient unit's command line. */
export const EXPAND_ENVIRONMENT_SINCE = 254;

/**
 * Talks to one systemd manager (the user's or the system's) through
 * `systemctl`, every call bounded. Only ever given validated unit names.
 */
export class SystemdManager {
  readonly kind: ManagerKind;
  private readonly timeoutMs: number;

  constructor(kind: ManagerKind, timeoutMs: number) {
    this.kind = kind;
    this.timeoutMs = timeoutMs;
  }

  systemctl(args: string[]): Promise<string> {
    return runBounded("systemctl", [...(this.kind === "user" ? ["--user"] : []), ...args], this.timeoutMs);
  }

  /** Why this manager plainly cannot be reached (no socket, not root, PID 1 not systemd), from files alone; null when it may be. */
  unreachable(): string | null {
    if (this.kind === "user") {
      const dir = process.env.XDG_RUNTIME_DIR;
      if (!dir) return "XDG_RUNTIME_DIR is not set";
      if (!existsSync(join(dir, "systemd", "private")) && !existsSync(join(dir, "bus"))) return `no user manager socket in ${dir}`;
    } else {
      if (process.getuid?.() !== 0) return "not root";
      if (!existsSync("/run/systemd/system")) return "PID 1 is not systemd (/run/systemd/system is missing)";
    }
    return null;
  }

  /** Why this manager cannot be used from here, or null when it answers. */
  async problem(): Promise<string | null> {
    const unreachable = this.unreachable();
    if (unreachable) return unreachable;
    try {
      await this.systemctl(["show", "--property=Version"]);
      return null;
    } catch (error) {
      return `systemctl does not answer (${firstLine((error as Error).message)})`;
    }
  }

  /** One property of a unit; null when the unit is not loaded (systemd answers for any name, so `LoadState` decides). */
  async unitProperty(unit: string, property: string): Promise<string | null> {
    const out = await this.systemctl(["show", `--property=LoadState,${property}`, unit]);
    const fields = Object.fromEntries(out.split("\n").filter(Boolean).map((l) => [l.slice(0, l.indexOf("=")), l.slice(l.indexOf("=") + 1)]));
    return fields.LoadState === "loaded" ? (fields[property] ?? "") : null;
  }

  /**
   * Why a memory cap set through this manager would not be enforced, or null.
   * systemd accepts `MemoryMax=` even where the memory controller is missing
   * (on a hybrid host it is bound to v1) and then enforces nothing, so the
   * controller is looked for in the manager's own cgroup.
   */
  async memoryCapProblem(mount: string | null): Promise<string | null> {
    if (!mount) return "no cgroup v2 hierarchy is mounted";
    const own = (await this.systemctl(["show", "--property=ControlGroup", "--value"]).catch(() => "")).trim();
    const dir = join(mount, own || "/");
    let controllers: string[];
    try {
      controllers = readFileSync(join(dir, "cgroup.controllers"), "utf8").split(/\s+/).filter(Boolean);
    } catch (error) {
      return `cannot read ${join(dir, "cgroup.controllers")}: ${(error as Error).message}`;
    }
    if (controllers.includes("memory")) return null;
    return `the memory controller is not available to the ${this.kind} manager's cgroup ${dir} ` +
      `(controllers: ${controllers.join(" ") || "none"}; on a hybrid host it is bound to v1)`;
  }
}

/** `execFile` with a bound; the error carries stderr, which is where systemctl says why. */
export function runBounded(file: string, args: string[], timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(file, args, { timeout: timeoutMs, encoding: "utf8" }, (error, stdout, stderr) => {
      if (error) reject(new Error(`${file} ${args.join(" ")}: ${stderr.trim() || error.message}`));
      else resolve(stdout);
    });
  });
}

export function firstLine(s: string): string {
  return s.split("\n")[0].trim();
}
