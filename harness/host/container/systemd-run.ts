/**
 * argv for the container's `systemd-run`. Commands run as units of the
 * container's own systemd, so they live in its cgroup tree: a process merely
 * entered with nsenter stays in the host's cgroup, and `systemd-run --user
 * --scope` from it fails with "Failed to add PIDs to scope's control group".
 * Pure functions: checked with plain data, no container needed.
 */

/** Who runs the command inside. */
export interface RunAs {
  user: string;
  uid: number;
}

export interface UnitSpec {
  /** Unit name without `.service`. */
  unit: string;
  argv: string[];
  /** Run as this user in the system manager (its XDG_RUNTIME_DIR set, so `systemctl --user` and `systemd-run --user` work). */
  runAs?: RunAs;
  env?: Record<string, string>;
  cwd?: string;
  /** systemd ends the unit after this many seconds even if nobody waits for it any more. */
  runtimeMaxSec?: number;
  /** Extra `-p` properties, e.g. `KillMode=mixed`. */
  properties?: string[];
}

export function runtimeDir(uid: number): string {
  return `/run/user/${uid}`;
}

function common(spec: UnitSpec): string[] {
  const args = [`--unit=${spec.unit}`, "--quiet"];
  if (spec.runAs) args.push(`--uid=${spec.runAs.user}`, "-E", `XDG_RUNTIME_DIR=${runtimeDir(spec.runAs.uid)}`);
  for (const [key, value] of Object.entries(spec.env ?? {})) args.push("-E", `${key}=${value}`);
  if (spec.cwd) args.push(`--working-directory=${spec.cwd}`);
  if (spec.runtimeMaxSec !== undefined) args.push("-p", `RuntimeMaxSec=${spec.runtimeMaxSec}`);
  for (const property of spec.properties ?? []) args.push("-p", property);
  return args;
}

/**
 * Runs to completion with stdio piped through; systemd-run's exit code is
 * the command's. `--collect` unloads the unit even when it failed, so the
 * next exec can reuse nothing by accident and names do not pile up.
 *
 * @example
 * ```ts
 * import { waitedRunArgv } from "./systemd-run.ts";
 * console.log(waitedRunArgv({ unit: "x-1", argv: ["true"] }).join(" "));
 * // systemd-run --wait --pipe --collect --unit=x-1 --quiet -- true
 * ```
 */
export function waitedRunArgv(spec: UnitSpec): string[] {
  return ["systemd-run", "--wait", "--pipe", "--collect", ...common(spec), "--", ...spec.argv];
}

/** Starts a long-lived service in the system manager and returns at once. */
export function startedRunArgv(spec: UnitSpec): string[] {
  return ["systemd-run", ...common(spec), "--", ...spec.argv];
}

/**
 * Starts a long-lived service in the user's own manager (user@UID.service),
 * for a process that must live where a user's supervisor would. The caller
 * enters as the user, so no --uid here.
 */
export function startedUserRunArgv(spec: Omit<UnitSpec, "runAs">, uid: number): string[] {
  const env = { ...(spec.env ?? {}) };
  return [
    "env",
    `XDG_RUNTIME_DIR=${runtimeDir(uid)}`,
    `DBUS_SESSION_BUS_ADDRESS=unix:path=${runtimeDir(uid)}/bus`,
    "systemd-run",
    "--user",
    ...common({ ...spec, env }),
    "--",
    ...spec.argv,
  ];
}

/** Names for one-off exec units: unique per process and call, valid as unit names. */
export function execUnitName(counter: number): string {
  return `outlive-exec-${process.pid}-${counter}-${Math.random().toString(36).slice(2, 8)}`;
}
