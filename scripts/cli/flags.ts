import { parseArgs, type ParseArgsConfig } from "node:util";
import { parseDuration } from "../../lib/retention/duration.ts";
import { UsageError } from "./usage-error.ts";

type Options = NonNullable<ParseArgsConfig["options"]>;

/**
 * parseArgs, with its errors said the way a person fixes them: the flag and
 * what it takes, never "argument is ambiguous" or a `-- "-d"` suggestion. A
 * negative number after a flag that takes a value is that flag's value
 * (`--keep -1`), so the command's own check names what it takes.
 */
export function parseFlags<O extends Options>(
  args: string[],
  options: O,
  allowPositionals = true,
): { values: { [K in keyof O]?: O[K]["type"] extends "boolean" ? boolean : O[K]["multiple"] extends true ? string[] : string }; positionals: string[] } {
  const joined = joinNegativeValues(args, options);
  try {
    return parseArgs({ args: joined, options, allowPositionals, strict: true }) as never;
  } catch (error) {
    throw new UsageError(flagProblem(error as Error & { code?: string }, joined, options));
  }
}

/** `--flag -1` as `--flag=-1` for a flag that takes a value; nothing after `--` is touched. */
function joinNegativeValues(args: string[], options: Options): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === "--") return [...out, ...args.slice(i)];
    const name = a.startsWith("--") ? a.slice(2) : a.length === 2 && a[0] === "-" ? shortName(a[1], options) : null;
    if (name && options[name]?.type === "string" && i + 1 < args.length && /^-\d/.test(args[i + 1])) {
      out.push(`--${name}=${args[++i]}`);
    } else out.push(a);
  }
  return out;
}

function shortName(letter: string, options: Options): string | null {
  return Object.entries(options).find(([, o]) => o.short === letter)?.[0] ?? null;
}

function flagList(options: Options): string {
  return Object.entries(options)
    .map(([name, o]) => `--${name}${o.type === "string" ? " VALUE" : ""}`)
    .join(", ");
}

function flagProblem(error: Error & { code?: string }, args: string[], options: Options): string {
  const message = String(error.message);
  const flag = /'(-{1,2}[^' ]+)/.exec(message)?.[1] ?? "";
  const name = flag.replace(/^-+/, "");
  const long = flag.startsWith("--") ? flag : `--${shortName(name, options) ?? name}`;
  switch (error.code) {
    case "ERR_PARSE_ARGS_UNKNOWN_OPTION":
      return `unknown flag ${flag}; this command takes ${flagList(options)} (see --help)`;
    case "ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL": {
      const arg = /'([^']*)'/.exec(message)?.[1] ?? "";
      return `takes no arguments, got ${JSON.stringify(arg)}`;
    }
    case "ERR_PARSE_ARGS_INVALID_OPTION_VALUE": {
      if (options[long.slice(2)]?.type === "boolean") return `${long} takes no value (it is on or off)`;
      const at = args.findIndex((a) => a === flag);
      const next = at === -1 ? undefined : args[at + 1];
      if (next === undefined) return `${long} takes a value, and none was given`;
      return `${long} takes a value, got the flag ${JSON.stringify(next)} (write ${long}=${next} if that is the value)`;
    }
    default:
      return message.split("\n")[0];
  }
}

/** A flag's (or positional's) number, or a UsageError naming it. */
export function number(flag: string, text: string): number {
  const n = Number(text);
  if (text.trim() === "" || !Number.isFinite(n)) throw new UsageError(`${flag} takes a number, got ${JSON.stringify(text)}`);
  return n;
}

/**
 * A flag's duration in seconds: `90s`, `15m`, `2h`, `7d`, `2w`, or a plain
 * number of seconds (lib/retention/duration.ts), or a UsageError naming it.
 */
export function seconds(flag: string, text: string, { min = 0 }: { min?: number } = {}): number {
  const ms = /^(\d+(?:\.\d+)?)ms$/.exec(text.trim());
  const s = ms ? Number(ms[1]) / 1000 : /^\d+(\.\d+)?$/.test(text.trim()) ? Number(text) : parseDuration(text);
  if (s === null || !Number.isFinite(s) || s < min) {
    throw new UsageError(`${flag} takes a duration such as 500ms, 90s, 15m, 2h or a number of seconds${min > 0 ? ` (more than ${min})` : ""}, got ${JSON.stringify(text)}`);
  }
  return s;
}

/** `--help`: the command's help on stdout, exit 0. */
export function help(text: string): number {
  console.log(text);
  return 0;
}
