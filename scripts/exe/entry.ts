/**
 * The single executable's entry (scripts/build-exe.ts bundles it to one
 * CommonJS file): the CLI of the npm package less `scenario`, or, with
 * SPAWNER_MODE as its first argument, the storage's spawner
 * (lib/spawner/spawner-command-line.ts), which has no file of its own to run
 * beside a binary. No top-level await: a CommonJS bundle cannot hold one.
 */
import { keepNodeSettingsOut } from "./node-settings.ts";
import { SPAWNER_MODE } from "../../lib/spawner/spawner-command-line.ts";
import { COMMANDS } from "../cli/command-table.ts";
import { main } from "../cli/main.ts";
import { UsageError } from "../cli/usage-error.ts";

/** `outlive scenario` needs Node, a compiler's worth of type stripping and the harness's files: the npm package has them. */
async function scenarioElsewhere(): Promise<number> {
  throw new UsageError("not in the single executable: scenarios run from the npm package (npm i -D outlive, then npx outlive scenario …), on a machine with Node");
}

keepNodeSettingsOut();
const args = process.argv.slice(2);
if (args[0] === SPAWNER_MODE) {
  void import("../../lib/spawner/spawner-program.ts").then(({ runSpawner }) => runSpawner(args.slice(1)));
} else {
  void main(args, { ...COMMANDS, scenario: async () => scenarioElsewhere }).then((code) => {
    process.exitCode = code;
  });
}
