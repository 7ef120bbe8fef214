/**
 * The steps of a task's life a supervisor reports to `onStep`, in the order
 * they happen for a task this supervisor starts:
 *
 * - `recorded`: its `starting` record is on disk (the process does not exist yet);
 * - `planned`: its placement has said where it goes (unit or cgroup, prefix);
 * - `sent`: with a spawner (lib/spawner), the spawn request is on its way to
 *   it: from here a kill of the supervisor no longer stops the fork;
 * - `forked`: the wrapper's process exists (its files were made first);
 * - `placed`: the process is in its unit or cgroup, and has exec'd the wrapper;
 * - `command-pid`: the command's own pid is known (or waited for in vain);
 * - `running`: its `running` record is on disk, and `run` returns;
 * - `decided`: a look at its evidence found it over (exit marker, or its end otherwise told);
 * - `ended`: its terminal record is on disk (a `wait` called once the end
 *   was decided may resolve a moment before, with that same record).
 *
 * A task that ends at once may be `decided` before it is `running`: it is
 * watched while its `running` record is being written, and its end is
 * written after that record. `decided` and `ended` come for adopted tasks
 * too. Each report carries
 * `performance.now()` of that moment, so the gaps between them say what
 * each step of a spawn costs (bench/spawn.ts prints them).
 *
 * @example
 * ```ts
 * import { TASK_STEPS } from "./task-steps.ts";
 * console.log(TASK_STEPS.join(" ")); // "recorded planned sent forked placed command-pid running decided ended"
 * ```
 */
export const TASK_STEPS = ["recorded", "planned", "sent", "forked", "placed", "command-pid", "running", "decided", "ended"] as const;

export type TaskStep = (typeof TASK_STEPS)[number];

/** Hears a step of one task: its id, the step, and `performance.now()` when it happened. */
export type StepListener = (id: string, step: TaskStep, atMs: number) => void;
