import { parseArgs, type ParseArgsConfig } from "node:util";
import { UsageError } from "./usage-error.ts";

/** parseArgs with usage errors turned into UsageError. */
export function parseFlags<O extends NonNullable<ParseArgsConfig["options"]>>(
  args: string[],
  options: O,
  allowPositionals = true,
): { values: { [K in keyof O]?: O[K]["type"] extends "boolean" ? boolean : string }; positionals: string[] } {
  try {
    return parseArgs({ args, options, allowPositionals, strict: true }) as never;
  } catch (error) {
    // parseArgs explains over several lines; the first names the flag and the problem.
    throw new UsageError(String((error as Error).message).split("\n")[0]);
  }
}

/** A flag's (or positional's) number, or a UsageError naming it. */
export function number(flag: string, text: string): number {
  const n = Number(text);
  if (text.trim() === "" || !Number.isFinite(n)) throw new UsageError(`${flag} takes a number, got ${JSON.stringify(text)}`);
  return n;
}

/** `--help`: the command's help on stdout, exit 0. */
export function help(text: string): number {
  console.log(text);
  return 0;
}
