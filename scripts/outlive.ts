#!/usr/bin/env -S node --
/**
 * The npm package's CLI: the commands of command-table.ts and `scenario`,
 * which runs from the package (its harness finds its cases and hooks beside
 * its own files). The single executable has its own entry
 * (scripts/exe/entry.ts) on the same table.
 */
import { COMMANDS } from "./cli/command-table.ts";
import { main } from "./cli/main.ts";

void main(process.argv.slice(2), {
  ...COMMANDS,
  scenario: async () => (await import("./commands/scenario.ts")).scenarioCommand,
}).then((code) => {
  process.exitCode = code;
});
