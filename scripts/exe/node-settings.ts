/**
 * The single executable keeps the user's Node settings out of itself: the
 * `NODE_*` variables (`NODE_DEBUG`, `NODE_V8_COVERAGE`,
 * `NODE_REDIRECT_WARNINGS`, `NODE_COMPILE_CACHE`, `NODE_ICU_DATA`, …) are
 * the settings of the user's own Node programs, and the Node inside would
 * obey them at its start: print debug lines into `serve`'s log, write
 * coverage or cache files, fail to start on a bad path. They are read before
 * any code of outlive's runs, so where one is set the executable starts
 * itself once more, in place (`process.execve`: the same pid, the same
 * descriptors), without them; the new image puts them back into
 * `process.env`, so the tasks it starts still get the user's environment as
 * it was. Where none is set, nothing happens. Passed over, as they change
 * nothing outlive does and are often set machine-wide (a second start would
 * cost every command its start-up time again): `NODE_OPTIONS` (the
 * executable is built with `execArgvExtension: "none"`) and the TLS
 * settings (outlive makes no TLS connection).
 */

/** Carries the variables taken out across the re-exec, as JSON; removed again at once. */
const CARRIED = "OUTLIVE_EXE_NODE_SETTINGS";

/** Node variables that change nothing the executable does (see above). */
const HARMLESS = new Set(["NODE_OPTIONS", "NODE_EXTRA_CA_CERTS", "NODE_TLS_REJECT_UNAUTHORIZED", "NODE_USE_SYSTEM_CA"]);

/** The variables the Node inside would obey at its start, and that would change what it does. */
export function nodeSettings(env: NodeJS.ProcessEnv): string[] {
  return Object.keys(env).filter((k) => k.startsWith("NODE_") && !HARMLESS.has(k));
}

/**
 * Called first thing in the executable: restores what a previous image
 * carried over, or re-executes without the Node settings (never returns then).
 */
export function keepNodeSettingsOut(): void {
  const carried = process.env[CARRIED];
  if (carried !== undefined) {
    delete process.env[CARRIED];
    try {
      Object.assign(process.env, JSON.parse(carried) as Record<string, string>);
    } catch {
      // Not ours to read: the settings stay out.
    }
    return;
  }
  const settings = nodeSettings(process.env);
  const execve = (process as { execve?: (file: string, args: string[], env: NodeJS.ProcessEnv) => never }).execve;
  if (settings.length === 0 || typeof execve !== "function") return;
  const env: NodeJS.ProcessEnv = { ...process.env };
  const taken: Record<string, string> = {};
  for (const k of settings) {
    taken[k] = env[k]!;
    delete env[k];
  }
  env[CARRIED] = JSON.stringify(taken);
  // A SEA's argv is [execPath, argv0 as it was given, …args]: the new image gets argv0 and the args back.
  execve.call(process, process.execPath, process.argv.slice(1), env);
}
