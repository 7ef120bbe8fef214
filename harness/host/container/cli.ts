/**
 * The container from a shell:
 *
 *   node dist/harness/host/container/cli.js engine                 which engine would run here, and why
 *   node dist/harness/host/container/cli.js build [--suite S] [--engine vm]
 *                                                             build (or find) the cached root file system (vm: its guest image)
 *   node dist/harness/host/container/cli.js up [--suite S] [--host-layout] [--name N] [--engine E]
 *                                                             boot, print the name, leave it running
 *   node dist/harness/host/container/cli.js exec NAME [--user] -- ARGV...
 *   node dist/harness/host/container/cli.js journal NAME
 *   node dist/harness/host/container/cli.js down NAME | --all      stop and remove everything it left
 *   node dist/harness/host/container/cli.js smoke [--suite S]      up, a few checks, down
 *   node dist/harness/host/container/cli.js job [--suite S] -- SCRIPT
 *                                                             SCRIPT (sh, as root) in a privileged podman job
 *                                                             container without systemd: GitLab's shape, locally
 *
 * Exit 77 means "cannot run here" (no root, no engine, no network for
 * debootstrap, a container that does not boot), with one line saying what
 * is missing.
 */
import { parseArgs } from "node:util";
import { attachContainer, bootContainer, machineFromState, stderrLog } from "./boot.ts";
import { ENGINE_FACTS, ENGINE_NAMES, ENGINES } from "./engines.ts";
import { describeFailure } from "./errors.ts";
import { resolveOptions, type ContainerOptions, type EngineChoice, type Suite, SUITES } from "./options.ts";
import { runInJobContainer } from "./host-checks/job.ts";
import { engineMissing } from "./host-checks/preflight.ts";
import { ensureRootfs } from "./image/rootfs.ts";
import { listStateNames, loadState } from "./state.ts";

const USAGE = `usage: cli.js engine | build | up | exec NAME [--user] -- ARGV... | journal NAME | down NAME|--all | smoke | job -- SCRIPT  [--suite ${SUITES.join("|")}] [--host-layout] [--name N] [--engine auto|${ENGINE_NAMES.join("|")}] [--cache-dir DIR]`;

async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      suite: { type: "string" },
      "host-layout": { type: "boolean", default: false },
      name: { type: "string" },
      "cache-dir": { type: "string" },
      engine: { type: "string" },
      user: { type: "boolean", default: false },
      all: { type: "boolean", default: false },
      help: { type: "boolean", short: "h", default: false },
    },
  });
  const [command, ...rest] = positionals;
  if (values.help || command === undefined) {
    console.log(USAGE);
    return command === undefined && !values.help ? 2 : 0;
  }
  const options: ContainerOptions = {
    suite: values.suite as Suite | undefined,
    unified: !values["host-layout"],
    name: values.name,
    engine: values.engine as EngineChoice | undefined,
    cacheDir: values["cache-dir"],
  };
  switch (command) {
    case "engine":
      return await engine();
    case "build": {
      const resolved = resolveOptions(options);
      const prepare = resolved.engine === "auto" ? undefined : ENGINES[resolved.engine].prepare;
      if (prepare) {
        console.log(await prepare(resolved, stderrLog));
        return 0;
      }
      const r = await ensureRootfs(resolved, stderrLog);
      console.log(`${r.rootfs}${r.buildMs === null ? " (cached)" : ` (built in ${(r.buildMs / 1000).toFixed(1)} s)`}`);
      return 0;
    }
    case "up": {
      const c = await bootContainer(options);
      console.log(c.info.name);
      return 0;
    }
    case "exec": {
      const [name, ...command] = rest;
      if (!name || command.length === 0) return usage();
      const r = await attachContainer(name).exec(command, { user: values.user });
      process.stdout.write(r.stdout);
      process.stderr.write(r.stderr);
      return r.exitCode;
    }
    case "journal": {
      if (!rest[0]) return usage();
      process.stdout.write(await attachContainer(rest[0]).journal());
      return 0;
    }
    case "down":
      return await down(values.all ? listStateNames(resolveOptions({}).cacheDir) : rest);
    case "smoke":
      return await smoke(options);
    case "job": {
      if (rest.length === 0) return usage();
      const r = await runInJobContainer(rest.join(" "), { ...options, timeoutMs: 60 * 60_000 }, stderrLog);
      process.stdout.write(r.stdout);
      process.stderr.write(r.stderr);
      if (r.leftovers.length > 0) console.error(`job: LEFT ${r.leftovers.join(", ")}`);
      return r.exitCode ?? 1;
    }
    default:
      return usage();
  }
}

function usage(): number {
  console.error(USAGE);
  return 2;
}

/** Every engine and whether it can run here; `auto` takes the first of those it tries that can. */
async function engine(): Promise<number> {
  let chosen: string | null = null;
  for (const name of ENGINE_NAMES) {
    const why = await engineMissing(name);
    if (why === null && ENGINE_FACTS[name].auto) chosen ??= name;
    const how = why === null ? await ENGINES[name].howItRuns?.(resolveOptions({ engine: name })) : undefined;
    console.log(`${name.padEnd(7)} ${why === null ? `can run here${how ? `: ${how}` : ""}` : `cannot: ${why}`}`);
  }
  console.log(`auto    → ${chosen ?? "none: run container/install-deps.sh as root"}`);
  return chosen === null ? 77 : 0;
}

async function down(names: string[]): Promise<number> {
  const { cacheDir, stopTimeoutMs } = resolveOptions({});
  let status = 0;
  for (const name of names) {
    const report = await machineFromState(loadState(cacheDir, name)).stop(stopTimeoutMs);
    console.log(`${name}: ${report.stopped} in ${report.ms} ms${report.clean ? ", nothing left" : `, LEFT: ${report.leftovers.join(", ")}`}`);
    if (!report.clean) status = 1;
  }
  return status;
}

/** Boots, checks what scenarios rely on, tears down: the quickest "does it work here?". */
async function smoke(options: ContainerOptions): Promise<number> {
  const c = await bootContainer(options);
  try {
    const node = await c.exec(["node", "--version"], { user: true });
    const scope = await c.shell(
      "systemd-run --user --scope --unit=smoke-1 --slice=smoke.slice -p RuntimeMaxSec=10 cat /proc/self/cgroup | grep '^0::'",
      { user: true, timeoutMs: 20_000 },
    );
    console.log(`node ${node.stdout.trim()} (exit ${node.exitCode}); user scope: ${scope.stdout.trim()} (exit ${scope.exitCode})`);
    return node.exitCode === 0 && scope.exitCode === 0 ? 0 : 1;
  } finally {
    const report = await c.teardown();
    console.log(`teardown: ${report.stopped} in ${report.ms} ms${report.clean ? ", nothing left" : `, LEFT: ${report.leftovers.join(", ")}`}`);
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error) => {
    const { line, exitCode } = describeFailure(error);
    console.error(line);
    process.exit(exitCode);
  },
);
