import { execFileSync, spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { allFlags, COMPLETION } from "../../scripts/cli/completion-words.ts";
import { outliveCli, outliveCliAwaited, tempDir } from "../support/cli.ts";

const temp = tempDir("outlive-completion-");
afterAll(() => temp.remove());

function script(shell: string): string {
  const r = outliveCli(["completion", shell]);
  expect(r.code, r.err).toBe(0);
  const file = join(temp.dir, `outlive.${shell}`);
  writeFileSync(file, r.out);
  return file;
}

function installed(shell: string): string | null {
  return spawnSync(shell, ["-c", "exit 0"]).error ? `${shell} is not installed here` : null;
}

/** Runs `code` in `shell` and returns its stdout, one completion a line. */
function inShell(shell: string, code: string): string[] {
  return execFileSync(shell, ["-c", code], { encoding: "utf8", timeout: 30_000, cwd: temp.dir }).split("\n").filter(Boolean);
}

const CASES: Array<{ words: string[]; includes: string[]; excludes?: string[] }> = [
  { words: ["outlive", "p"], includes: ["ps", "prune", "probe"], excludes: ["run"] },
  { words: ["outlive", "ins"], includes: ["inspect"] },
  { words: ["outlive", "ps", "--s"], includes: ["--storage", "--state"], excludes: ["--shell"] },
  { words: ["outlive", "ps", "--state", ""], includes: ["running", "exited", "timed_out"] },
  { words: ["outlive", "rm", "-"], includes: ["--force", "--json"] },
  { words: ["outlive", "agent", ""], includes: ["run", "retire"] },
  { words: ["outlive", "agent", "retire", "--d"], includes: ["--dry-run"] },
  { words: ["outlive", "agent", "run", "--"], includes: ["--agent", "--server", "--storage"], excludes: ["--dry-run"] },
  { words: ["outlive", "completion", ""], includes: ["bash", "zsh", "fish"] },
  { words: ["outlive", "run", "--timeout", "90s", "--sh"], includes: ["--shell", "--shell-path"] },
];

describe("outlive completion", () => {
  it("refuses a shell it has no script for (exit 2) and names the ones it has", () => {
    const r = outliveCli(["completion", "tcsh"]);
    expect(r.code).toBe(2);
    expect(r.err.trim()).toBe('outlive completion: completion takes one shell: bash, zsh, fish, got "tcsh"');
  });

  it("completes only flags each command accepts", async () => {
    for (const [name, command] of Object.entries(COMPLETION)) {
      const subs = name === "completion" ? [null] : command.subcommands ?? [null];
      for (const sub of subs) {
        const flags = [...command.flags, ...(sub ? command.subcommandFlags?.[sub] ?? [] : [])];
        const args = flags.flatMap((f) => [`--${f.name}`, ...(f.value === undefined ? [] : [Array.isArray(f.value) ? f.value[0] : f.value === "dir" ? "/tmp" : "x"])]);
        // The flags are parsed before --help is obeyed: an unknown one is a usage error (exit 2).
        const r = await outliveCliAwaited([name, ...(sub ? [sub] : []), ...args.filter((a) => a !== "--help"), "--help"]);
        expect(r.code, `${name} ${sub ?? ""}: ${r.err}`).toBe(0);
      }
    }
  });

  it("completes every flag each command's --help names", async () => {
    // Named in a help but not completed on purpose: a deprecated alias, and a flag of the agent's own command line.
    const notCompleted: Record<string, string[]> = { agent: ["--harness", "--mcp-config"] };
    for (const [name, command] of Object.entries(COMPLETION)) {
      const text = (await outliveCliAwaited([name, "--help"])).out;
      const named = new Set([...text.matchAll(/(?:^|[\s,[|(])(--[a-z][a-z-]*)/g)].map((m) => m[1]));
      const completed = new Set(allFlags(command).map((f) => `--${f.name}`));
      for (const flag of named) if (!notCompleted[name]?.includes(flag)) expect(completed.has(flag), `${name} ${flag}`).toBe(true);
    }
  });

  it("bash: registers with complete and completes commands, flags, subcommands and values", () => {
    const file = script("bash");
    expect(inShell("bash", `source ${file}; complete -p outlive`)).toEqual(["complete -F _outlive outlive"]);
    for (const c of CASES) {
      const words = c.words.map((w) => `'${w}'`).join(" ");
      const got = inShell("bash", `source ${file}; COMP_WORDS=(${words}); COMP_CWORD=${c.words.length - 1}; _outlive; printf '%s\\n' "\${COMPREPLY[@]}"`);
      expect(got, c.words.join(" ")).toEqual(expect.arrayContaining(c.includes));
      for (const x of c.excludes ?? []) expect(got, c.words.join(" ")).not.toContain(x);
    }
    // After `--` the words are the task's own: commands on PATH.
    expect(inShell("bash", `source ${file}; COMP_WORDS=(outlive run -- sle); COMP_CWORD=3; _outlive; printf '%s\\n' "\${COMPREPLY[@]}"`)).toContain("sleep");
  });

  it.skipIf(installed("zsh"))("zsh: registers with compdef and completes the same words", () => {
    const file = script("zsh");
    const setup = `autoload -U compinit; compinit -u -d ${join(temp.dir, "zcompdump")}; source ${file};`;
    expect(inShell("zsh", `${setup} print -r -- "\${_comps[outlive]}"`)).toEqual(["_outlive"]);
    // The completion system's own builtins print what they were given, so the function runs outside a widget.
    const stubs = `compadd() { [[ $1 == -- ]] && shift; print -rl -- "$@"; }; _describe() { print -rl -- "\${(@)\${(@P)4}%%:*}"; }; _files() { print -r -- FILES; };`;
    for (const c of CASES) {
      const words = c.words.map((w) => `'${w}'`).join(" ");
      // zsh's completers offer every word and let the shell filter by the prefix typed.
      const got = inShell("zsh", `${setup} ${stubs} words=(${words}); CURRENT=${c.words.length}; PREFIX='${c.words.at(-1)}'; _outlive`).filter((w) => w.startsWith(c.words.at(-1)!));
      expect(got, c.words.join(" ")).toEqual(expect.arrayContaining(c.includes));
      for (const x of c.excludes ?? []) expect(got, c.words.join(" ")).not.toContain(x);
    }
  });

  it.skipIf(installed("fish"))("fish: completes the same words with complete -C", () => {
    const file = script("fish");
    for (const c of CASES) {
      const got = inShell("fish", `source ${file}; complete -C '${c.words.join(" ")}'`).map((l) => l.split("\t")[0]);
      expect(got, c.words.join(" ")).toEqual(expect.arrayContaining(c.includes));
      for (const x of c.excludes ?? []) expect(got, c.words.join(" ")).not.toContain(x);
    }
  });
});

for (const shell of ["zsh", "fish"]) {
  const why = installed(shell);
  if (why) console.log(`skipping the ${shell} completion test: ${why}`);
}
