/**
 * arguments: an argv full of what shells and systemd like to rewrite
 * (`${…}`, `$$`, `%` specifiers, quotes, backslashes, newlines, non-ASCII)
 * reaches the command byte for byte, scoped and unscoped; a shell string
 * reaches /bin/sh unchanged. Also checks that outlive passes
 * `--expand-environment=no` exactly where this systemd accepts it (254+:
 * 257 yes, 252 no).
 */
import { $ } from "zx";
import { SystemdScopePlacement } from "../../lib/internal.ts";
import { defineScenario } from "../inside/define-scenario.ts";
import { runIfMain } from "../inside/run-if-main.ts";

const HOSTILE = [
  "${HOME}", "$HOME", "$$", "$(id -u)", "`id -u`", "%h %n %% %i",
  "'single'", '"double"', "back\\slash\\\\", "two\nlines", "tab\there", "ünïcødé ✓ 日本",
  " leading and trailing ", "", "-n", "--", "*", ";exit 9",
];
/** Prints each argument NUL-terminated: exactly what the command received. */
const PRINT_ARGV = ["/bin/sh", "-c", 'printf "%s\\0" "$@"', "print-argv"];
const SHELL_STRING = `printf '%s|' '\${HOME}' '$$' "it's" 'a\\b' 'ü'`;
const SHELL_EXPECTED = "${HOME}|$$|it's|a\\b|ü|";

const scenario = defineScenario({
  name: "arguments",
  summary: "hostile argv and shell strings reach the command unchanged, scoped and unscoped; --expand-environment=no exactly where supported",
  async inside(ctx) {
    for (const placement of ["systemd-scope", "process-group"]) {
      const storage = ctx.storageFor(placement);
      const d = ctx.daemon({ name: placement, placement, storage });
      await d.start();
      const a = await d.run({ id: "argv", argv: [...PRINT_ARGV, ...HOSTILE] });
      const s = await d.run({ id: "shell", shell: SHELL_STRING });
      for (const t of [a, s]) await ctx.completion(d, t.id);
      const received = ctx.output("argv", "stdout", storage).split("\0").slice(0, -1);
      ctx.check(`${placement}: every argument arrived byte for byte`, JSON.stringify(received) === JSON.stringify(HOSTILE), { received, stderr: ctx.output("argv", "stderr", storage) });
      ctx.check(`${placement}: the shell string ran unchanged`, ctx.output("shell", "stdout", storage) === SHELL_EXPECTED, { stdout: ctx.output("shell", "stdout", storage), stderr: ctx.output("shell", "stderr", storage) });
      await d.stop("disable");
    }

    const accepts = await $({ nothrow: true, quiet: true, timeout: "10s" })`systemd-run --user --scope --quiet --collect --expand-environment=no true`;
    const plan = await new SystemdScopePlacement({ prefix: `${ctx.prefix}-plan` }).plan({ id: "x", backstopSeconds: 10, memoryMaxBytes: null });
    const passes = plan.prefix.includes("--expand-environment=no");
    ctx.fact("expandEnvironment", { systemd: ctx.systemd, accepted: accepts.exitCode === 0, passedByOutlive: passes, stderr: accepts.stderr.trim() });
    ctx.check(`systemd ${ctx.systemd} ${accepts.exitCode === 0 ? "accepts" : "rejects"} --expand-environment=no, and outlive ${passes ? "passes" : "omits"} it`, passes === (accepts.exitCode === 0), { exitCode: accepts.exitCode, passes });
    ctx.check(`the expectation for systemd ${ctx.systemd}: flag ${ctx.systemd >= 254 ? "passed" : "omitted"}`, passes === ctx.systemd >= 254, { passes, systemd: ctx.systemd });
  },
});
export default scenario;
runIfMain(import.meta.url, scenario.name);
