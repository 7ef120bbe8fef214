import { createHash } from "node:crypto";
import type { ReadySpec } from "../ready/ready-spec.ts";
import type { TaskCommand } from "../store/record/record.ts";
import type { RestartPolicy } from "./restart-policy.ts";

/** What `ensure` compares: the parts of a checked spec that make a task what it is. */
export interface DigestedSpec {
  command: TaskCommand;
  cwd: string;
  /** The explicit variables, values included: they go into the digest, never into the record. */
  env: Record<string, string>;
  /** sha256 of the env file's bytes, or null without one. */
  envFileDigest: string | null;
  timeoutSeconds: number | null;
  memoryMaxBytes: number | null;
  cpuCores: number | null;
  pidsMax: number | null;
  pty: { cols: number; rows: number } | null;
  ready: ReadySpec | null;
  restart: RestartPolicy | null;
}

/**
 * A digest of the checked spec (`sha256:` and 64 hex digits): the same for
 * the same command, cwd, explicit env values, env file contents, limits,
 * terminal, readiness and restart policy, whatever order they were given in.
 * Neither the inherited environment nor the task's id or key go in. The
 * values are hashed together with everything else, so the record holds no
 * digest of any one of them. Pure.
 *
 * @example
 * ```ts
 * import { specDigest } from "./spec-digest.ts";
 * const base = { command: { argv: ["vite"] }, cwd: "/app", env: { A: "1", B: "2" }, envFileDigest: null, timeoutSeconds: null,
 *   memoryMaxBytes: null, cpuCores: null, pidsMax: null, pty: null, ready: null, restart: null };
 * console.log(specDigest(base) === specDigest({ ...base, env: { B: "2", A: "1" } })); // true
 * console.log(specDigest(base) === specDigest({ ...base, env: { A: "1", B: "3" } })); // false
 * ```
 */
export function specDigest(spec: DigestedSpec): string {
  const command = "argv" in spec.command ? { argv: spec.command.argv } : { shell: spec.command.shell, shellPath: spec.command.shellPath ?? "/bin/sh" };
  const canonical = JSON.stringify([
    "outlive-spec-1",
    command,
    spec.cwd,
    Object.entries(spec.env).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
    spec.envFileDigest,
    [spec.timeoutSeconds, spec.memoryMaxBytes, spec.cpuCores, spec.pidsMax],
    spec.pty && [spec.pty.cols, spec.pty.rows],
    spec.ready && [spec.ready.log, spec.ready.port, spec.ready.http, spec.ready.timeoutSeconds],
    spec.restart && [spec.restart.when, spec.restart.max, spec.restart.delayMs, spec.restart.delayMaxMs],
  ]);
  return `sha256:${createHash("sha256").update(canonical).digest("hex")}`;
}

/** The record's side of a comparison: what it keeps in the clear. */
interface ClearParts {
  command: TaskCommand;
  cwd: string;
  timeoutSeconds: number | null;
  memoryMaxBytes: number | null;
  cpuCores?: number | null;
  pidsMax?: number | null;
  pty?: { cols: number; rows: number } | null;
  ready?: ReadySpec | null;
  restart?: RestartPolicy | null;
}

/**
 * Which parts of a spec differ from a live task's record, by name, for a
 * replaced task's answer. The env values and the env file's contents are
 * only in the digest: when the digests differ and nothing in the clear
 * does, it is `env`. Pure.
 *
 * @example
 * ```ts
 * import { specDifferences } from "./spec-digest.ts";
 * const r = { command: { argv: ["vite"] }, cwd: "/app", timeoutSeconds: null, memoryMaxBytes: null };
 * console.log(specDifferences(r, { ...r, cwd: "/other" })); // ["cwd"]
 * console.log(specDifferences(r, r)); // ["env"]
 * ```
 */
export function specDifferences(record: ClearParts, spec: ClearParts): string[] {
  const same = (a: unknown, b: unknown) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
  const commandOf = (c: TaskCommand) => ("argv" in c ? c : { shell: c.shell, shellPath: c.shellPath ?? "/bin/sh" });
  const parts: Array<[string, boolean]> = [
    ["command", same(commandOf(record.command), commandOf(spec.command))],
    ["cwd", record.cwd === spec.cwd],
    ["limits", same([record.timeoutSeconds, record.memoryMaxBytes, record.cpuCores, record.pidsMax], [spec.timeoutSeconds, spec.memoryMaxBytes, spec.cpuCores, spec.pidsMax])],
    ["pty", same(record.pty, spec.pty)],
    ["readiness", same(record.ready, spec.ready)],
    ["restart", same(record.restart, spec.restart)],
  ];
  const differ = parts.filter(([, ok]) => !ok).map(([name]) => name);
  return differ.length > 0 ? differ : ["env"];
}
