import { completionScript, type Shell, SHELLS } from "../cli/completion-scripts.ts";
import { help, parseFlags } from "../cli/flags.ts";
import { UsageError } from "../cli/usage-error.ts";

export const COMPLETION_HELP = `usage: outlive completion bash|zsh|fish

Prints a script that completes outlive's commands, subcommands, flags, and the values of
flags that take a directory, a file or one of a few words. Load it:
  bash  source <(outlive completion bash)          (or save it in ~/.local/share/bash-completion/completions/outlive)
  zsh   source <(outlive completion zsh)           (after compinit; or save it as _outlive in a $fpath directory)
  fish  outlive completion fish | source           (or save it as ~/.config/fish/completions/outlive.fish)`;

export async function completionCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseFlags(args, { help: { type: "boolean", short: "h" } });
  if (values.help) return help(COMPLETION_HELP);
  if (positionals.length !== 1 || !SHELLS.includes(positionals[0] as Shell)) {
    throw new UsageError(`completion takes one shell: ${SHELLS.join(", ")}${positionals.length ? `, got ${JSON.stringify(positionals.join(" "))}` : ""}`);
  }
  process.stdout.write(completionScript(positionals[0] as Shell));
  return 0;
}
