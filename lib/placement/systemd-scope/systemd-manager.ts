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

  /** The manager's own cgroup (`ControlGroup`), as its answer in `problem` said it; null before. */
  controlGroup: string | null = null;

  /** Why this manager cannot be used from here, or null when it answers. */
  async problem(): Promise<string | null> {
    const unreachable = this.unreachable();
    if (unreachable) return unreachable;
    try {
      // Its cgroup comes in the same answer: which controllers its scopes can have is read from it, at no extra call.
      const out = await this.systemctl(["show", "--property=Version,ControlGroup"]);
      this.controlGroup = /^ControlGroup=(.*)$/m.exec(out)?.[1]?.trim() || null;
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
    return this.controllerProblem(mount, ["memory"]);
  }

  /**
   * Why `wanted` controllers would not be enforced in this manager's
   * scopes, or null. systemd takes `MemoryMax=`, `CPUQuota=` and `TasksMax=`
   * even where the controller is missing, and then enforces nothing.
   */
  async controllerProblem(mount: string | null, wanted: string[]): Promise<string | null> {
    if (!mount) return "no cgroup v2 hierarchy is mounted";
    const controllers = await this.controllers(mount);
    if (typeof controllers === "string") return controllers;
    const missing = wanted.filter((c) => !controllers.list.includes(c));
    if (missing.length === 0) return null;
    return `the ${missing.join(" and ")} controller${missing.length > 1 ? "s are" : " is"} not available to the ${this.kind} manager's cgroup ${controllers.dir} ` +
      `(controllers: ${controllers.list.join(" ") || "none"}; on a hybrid host ${missing.length > 1 ? "they are" : "it is"} bound to v1)`;
  }

  /** The controllers of the manager's own cgroup, which its scopes can have; a string says why they cannot be read. */
  async controllers(mount: string): Promise<{ dir: string; list: string[] } | string> {
    const own = this.controlGroup ?? (await this.systemctl(["show", "--property=ControlGroup", "--value"]).catch(() => "")).trim();
    const dir = join(mount, own || "/");
    try {
      return { dir, list: readFileSync(join(dir, "cgroup.controllers"), "utf8").split(/\s+/).filter(Boolean) };
    } catch (error) {
      return `cannot read ${join(dir, "cgroup.controllers")}: ${(error as Error).message}`;
    }
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
