import { allFlags, type CompletedCommand, type CompletedFlag, COMPLETION } from "./completion-words.ts";

/** The shells `outlive completion` writes a script for. */
export const SHELLS = ["bash", "zsh", "fish"] as const;
export type Shell = (typeof SHELLS)[number];

const TOP_FLAGS = ["--help", "--version"];

function words(flags: CompletedFlag[]): string {
  return flags.flatMap((f) => [`--${f.name}`, ...(f.short ? [`-${f.short}`] : [])]).join(" ");
}

function bashSubFlags(c: CompletedCommand): string {
  const subs = Object.entries(c.subcommandFlags ?? {});
  if (subs.length === 0) return "";
  return `; case "\${COMP_WORDS[2]}" in ${subs.map(([sub, flags]) => `${sub}) flags="$flags ${words(flags)}" ;;`).join(" ")} esac`;
}

function zshSubFlags(c: CompletedCommand): string {
  const subs = Object.entries(c.subcommandFlags ?? {});
  if (subs.length === 0) return "";
  return `; case $words[3] in ${subs.map(([sub, flags]) => `${sub}) flags+=(${zshWords(flags)}) ;;`).join(" ")} esac`;
}

function bash(): string {
  const commands = Object.keys(COMPLETION).join(" ");
  const perCommand = Object.entries(COMPLETION)
    .map(([name, c]) => `    ${name}) flags="${words(c.flags)}"; subs="${(c.subcommands ?? []).join(" ")}"${bashSubFlags(c)} ;;`)
    .join("\n");
  // A flag's word list can differ between commands (--json is a file for scenario): the command decides first.
  const lists = Object.entries(COMPLETION).flatMap(([name, c]) =>
    allFlags(c).filter((f) => Array.isArray(f.value)).map((f) => `    ${name}:--${f.name}) COMPREPLY=($(compgen -W "${(f.value as readonly string[]).join(" ")}" -- "$cur")); return ;;`)
  );
  const paths = Object.entries(COMPLETION).flatMap(([name, c]) =>
    allFlags(c).filter((f) => f.value === "dir" || f.value === "file").map((f) => `    ${name}:--${f.name}) COMPREPLY=($(compgen ${f.value === "dir" ? "-d" : "-f"} -- "$cur")); return ;;`)
  );
  const values = Object.entries(COMPLETION).flatMap(([name, c]) =>
    allFlags(c).filter((f) => f.value === "value").map((f) => `${name}:--${f.name}`)
  );
  return `# bash completion for outlive: source <(outlive completion bash)
_outlive() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" prev="\${COMP_WORDS[COMP_CWORD-1]}" i
  COMPREPLY=()
  if [ "$COMP_CWORD" -eq 1 ]; then
    COMPREPLY=($(compgen -W "${commands} ${TOP_FLAGS.join(" ")}" -- "$cur"))
    return
  fi
  local cmd="\${COMP_WORDS[1]}"
  # After "--" the words are the task's: complete commands and files.
  for ((i = 2; i < COMP_CWORD; i++)); do
    if [ "\${COMP_WORDS[i]}" = "--" ]; then
      if [ "$i" -eq $((COMP_CWORD - 1)) ]; then COMPREPLY=($(compgen -c -- "$cur")); else COMPREPLY=($(compgen -f -- "$cur")); fi
      return
    fi
  done
  case "$cmd:$prev" in
${[...lists, ...paths].join("\n")}
    ${values.join("|") || "_none_"}) return ;;
  esac
  local flags="" subs=""
  case "$cmd" in
${perCommand}
    *) return ;;
  esac
  if [ -n "$subs" ] && [ "$COMP_CWORD" -eq 2 ] && [[ "$cur" != -* ]]; then
    COMPREPLY=($(compgen -W "$subs" -- "$cur"))
  elif [[ "$cur" == -* ]]; then
    COMPREPLY=($(compgen -W "$flags" -- "$cur"))
  fi
}
complete -F _outlive outlive
`;
}

function zshWords(flags: CompletedFlag[]): string {
  return flags.flatMap((f) => [`--${f.name}`, ...(f.short ? [`-${f.short}`] : [])]).join(" ");
}

function zsh(): string {
  const commands = Object.entries(COMPLETION).map(([name, c]) => `    '${name}:${c.about.replace(/'/g, "")}'`).join("\n");
  const perCommand = Object.entries(COMPLETION)
    .map(([name, c]) => `    ${name}) flags=(${zshWords(c.flags)}); subs=(${(c.subcommands ?? []).join(" ")})${zshSubFlags(c)} ;;`)
    .join("\n");
  const values = Object.entries(COMPLETION).flatMap(([name, c]) =>
    allFlags(c).filter((f) => f.value !== undefined).map((f) => {
      const v = f.value!;
      const action = Array.isArray(v) ? `compadd -- ${v.join(" ")}` : v === "dir" ? "_files -/" : v === "file" ? "_files" : ":";
      return `    ${name}:--${f.name}) ${action}; return ;;`;
    })
  );
  return `#compdef outlive
# zsh completion for outlive: source <(outlive completion zsh) after compinit, or save it as _outlive in $fpath
_outlive() {
  local -a commands flags subs
  commands=(
${commands}
  )
  if (( CURRENT == 2 )); then
    _describe -t commands 'outlive command' commands
    compadd -- ${TOP_FLAGS.join(" ")}
    return
  fi
  local cmd=$words[2] i
  for (( i = 3; i < CURRENT; i++ )); do
    if [[ $words[i] == -- ]]; then _normal; return; fi
  done
  case "$cmd:$words[CURRENT-1]" in
${values.join("\n")}
  esac
  case $cmd in
${perCommand}
    *) return ;;
  esac
  if (( CURRENT == 3 )) && (( $#subs )) && [[ $PREFIX != -* ]]; then
    compadd -- $subs
  else
    compadd -- $flags
  fi
}
if [[ $funcstack[1] == _outlive ]]; then _outlive "$@"; else compdef _outlive outlive; fi
`;
}

function fish(): string {
  const lines = ["# fish completion for outlive: outlive completion fish | source", "complete -c outlive -f"];
  const names = Object.keys(COMPLETION);
  for (const [name, c] of Object.entries(COMPLETION)) {
    lines.push(`complete -c outlive -n "not __fish_seen_subcommand_from ${names.join(" ")}" -a ${name} -d '${c.about.replace(/'/g, "")}'`);
    for (const sub of c.subcommands ?? []) lines.push(`complete -c outlive -n "__fish_seen_subcommand_from ${name}; and not __fish_seen_subcommand_from ${(c.subcommands ?? []).join(" ")}" -a ${sub}`);
    const groups: Array<[string, CompletedFlag[]]> = [
      [`__fish_seen_subcommand_from ${name}`, c.flags],
      ...Object.entries(c.subcommandFlags ?? {}).map(([sub, flags]): [string, CompletedFlag[]] => [`__fish_seen_subcommand_from ${name}; and __fish_seen_subcommand_from ${sub}`, flags]),
    ];
    for (const [condition, flags] of groups) {
      for (const f of flags) {
        const v = f.value;
        const takes = v === undefined ? "" : Array.isArray(v) ? ` -x -a '${v.join(" ")}'` : v === "dir" ? " -x -a '(__fish_complete_directories)'" : v === "file" ? " -r -F" : " -x";
        lines.push(`complete -c outlive -n "${condition}" -l ${f.name}${f.short ? ` -s ${f.short}` : ""}${takes}`);
      }
    }
  }
  lines.push(`complete -c outlive -n "not __fish_seen_subcommand_from ${names.join(" ")}" -l help -l version`);
  return `${lines.join("\n")}\n`;
}

/**
 * The completion script for `shell`: it completes commands, their
 * subcommands, their flags and the values of flags that take a path or one
 * of a few words. Pure: the table in completion-words.ts is the whole input.
 *
 * @example
 * ```ts
 * import { completionScript } from "./completion-scripts.ts";
 * console.log(completionScript("bash").includes("complete -F _outlive outlive")); // true
 * ```
 */
export function completionScript(shell: Shell): string {
  return shell === "bash" ? bash() : shell === "zsh" ? zsh() : fish();
}
