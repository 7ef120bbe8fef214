import { afterEach, describe, expect, it } from "vitest";
import { encodeShimSettings } from "../../lib/spawn/shim-settings.ts";
import { cleanupShims, defaults, ioFiles, type ShimRun, shimUnderTest, startShim } from "../support/shim-task.ts";

// Settings the shim cannot take: one line naming the key (on stderr and in io/shim-refused), exit 125, no exit
// marker, nothing run, never a hang.
const shim = shimUnderTest();
if (!shim.path) console.log(`test/shim/settings.test.ts skipped: ${shim.reason}`);
const SHIM = shim.path!;

/** NUL-terminated fields, as the shim reads them. */
function fields(...f: string[]): Buffer {
  return Buffer.from(f.map((x) => `${x}\0`).join(""), "utf8");
}

/** The fields of a good argv task whose command would leave `ran` behind, with `edit` applied. */
function good(io: string, id: string, ran: string, edit: (f: string[]) => string[] = (f) => f): Buffer {
  const all = encodeShimSettings({ ...defaults(io, id), command: { argv: ["touch", ran] } }).toString("utf8").split("\0").slice(0, -1);
  return fields(...edit(all));
}

async function refused(run: ShimRun): Promise<string> {
  const end = await run.exited;
  expect(end.code).toBe(125);
  const stderr = run.read("stderr");
  expect(stderr.split("\n")).toHaveLength(2);
  expect(stderr.endsWith("\n")).toBe(true);
  expect(stderr.startsWith("outlive-shim: ")).toBe(true);
  // No marker (the placeholder stays), no end, nothing the command would have made; the same line in
  // io/shim-refused, beside fd 3's exit marker whatever io the settings named, for the supervisor to read.
  expect(run.exitBytes()).toBe("    ");
  expect(ioFiles(run)).toEqual(["exit", "shim-refused", "stderr", "stdout", "timed-out.reserved"]);
  expect(run.read("shim-refused")).toBe(stderr);
  expect(run.has(`${run.dir}/ran`)).toBe(false);
  return stderr;
}

describe.skipIf(!shim.path)("outlive-shim refuses bad settings", () => {
  afterEach(cleanupShims);

  const cases: [string, (io: string, id: string, ran: string) => Buffer, RegExp][] = [
    ["an unknown key", (io, id, ran) => good(io, id, ran, (f) => [...f.slice(0, 3), "colour=blue", ...f.slice(3)]), /unknown key "colour"/],
    ["a missing key", (io, id, ran) => good(io, id, ran, (f) => f.filter((x) => !x.startsWith("grace_ms="))), /^outlive-shim: grace_ms: missing/],
    ["a number that does not parse", (io, id, ran) => good(io, id, ran, (f) => f.map((x) => (x.startsWith("deadline_ms=") ? "deadline_ms=1e3" : x))), /^outlive-shim: deadline_ms: not a whole number: "1e3"/],
    ["a negative number", (io, id, ran) => good(io, id, ran, (f) => f.map((x) => (x.startsWith("grace_ms=") ? "grace_ms=-5" : x))), /^outlive-shim: grace_ms: /],
    ["a bound below one block", (io, id, ran) => good(io, id, ran, (f) => f.map((x) => (x.startsWith("max_output=") ? "max_output=100" : x))), /^outlive-shim: max_output: 100 is below/],
    ["a bad watch", (io, id, ran) => good(io, id, ran, (f) => f.map((x) => (x.startsWith("watch=") ? "watch=fanotify" : x))), /^outlive-shim: watch: /],
    ["an id that is not argv[1]", (io, _id, ran) => good(io, "someone-else", ran), /^outlive-shim: id: "someone-else" is not the task id/],
    ["a relative io", (_io, id, ran) => good("tasks/t/io", id, ran), /^outlive-shim: io: not an absolute path/],
    ["a missing io directory", (io, id, ran) => good(`${io}/nonexistent`, id, ran), /^outlive-shim: io: .*No such file or directory/],
    ["a relative enter", (io, id, ran) => good(io, id, ran, (f) => [...f.slice(0, 3), "enter=cgroup.procs", ...f.slice(3)]), /^outlive-shim: enter: not an absolute path/],
    ["a host_ask_ms of 0", (io, id, ran) => good(io, id, ran, (f) => [...f.slice(0, -1), "host_ask_ms=0", "end="]), /^outlive-shim: host_ask_ms: must be at least 1/],
    ["a host_ask_ms over an hour", (io, id, ran) => good(io, id, ran, (f) => [...f.slice(0, -1), "host_ask_ms=3600001", "end="]), /^outlive-shim: host_ask_ms: 3600001 is more than 3600000/],
    ["a host_ask_ms that is not a number", (io, id, ran) => good(io, id, ran, (f) => [...f.slice(0, -1), "host_ask_ms=4s", "end="]), /^outlive-shim: host_ask_ms: not a whole number: "4s"/],
    ["a host_systemd that is not 1 or 0", (io, id, ran) => good(io, id, ran, (f) => [...f.slice(0, -1), "host_systemd=yes", "end="]), /^outlive-shim: host_systemd: expected 1 or 0, got "yes"/],
    ["a key given twice", (io, id, ran) => good(io, id, ran, (f) => [...f.slice(0, 3), "watch=poll", ...f.slice(3)]), /^outlive-shim: watch: given twice/],
    ["argv mode with no program", (io, id, ran) => good(io, id, ran, (f) => f.filter((x) => !x.startsWith("arg="))), /^outlive-shim: arg: missing/],
    ["a shell without its script", (io, id, ran) => good(io, id, ran, (f) => [...f.filter((x) => !x.startsWith("arg=") && !x.startsWith("mode=")).slice(0, -1), "mode=shell", "shell=/bin/sh", "end="]), /^outlive-shim: script: missing/],
    ["a restart policy without its bound", (io, id, ran) => good(io, id, ran, (f) => [...f.slice(0, -1), "restart=always", "restart_delay_ms=10", "restart_delay_max_ms=10", "end="]), /^outlive-shim: restart_max: missing/],
    ["a terminal size with no terminal", (io, id, ran) => good(io, id, ran, (f) => [...f.slice(0, -1), "cols=80", "end="]), /^outlive-shim: cols: only with pty_dir/],
    ["another version", (io, id, ran) => good(io, id, ran, (f) => ["v=2", ...f.slice(1)]), /^outlive-shim: v: version "2"/],
    ["no version first", (io, id, ran) => good(io, id, ran, (f) => f.slice(1)), /^outlive-shim: v: the first field must be v=1/],
    ["no end=", (io, id, ran) => good(io, id, ran, (f) => f.slice(0, -1)), /^outlive-shim: settings: cut short \(no end= field\)/],
    ["a last field with no NUL", (io, id, ran) => Buffer.concat([good(io, id, ran, (f) => f.slice(0, -1)), Buffer.from("end=")]), /^outlive-shim: settings: cut short/],
    ["fields after end=", (io, id, ran) => good(io, id, ran, (f) => [...f, "arg=more"]), /^outlive-shim: end: 1 more field/],
    ["nothing at all", () => Buffer.alloc(0), /^outlive-shim: settings: cut short \(nothing on stdin/],
    ["NUL-less garbage", () => Buffer.from("\x01\xff garbage \n".repeat(1000), "latin1"), /^outlive-shim: settings: cut short/],
  ];

  it("runs the same settings unedited (the control for each case below)", async () => {
    const run = startShim(SHIM, { raw: (io, id, dir) => good(io, id, `${dir}/ran`) });
    expect((await run.exited).code).toBe(0);
    expect(run.has(`${run.dir}/ran`)).toBe(true);
  });

  it.each(cases)("%s", async (_what, bytes, said) => {
    const run = startShim(SHIM, { raw: (io, id, dir) => bytes(io, id, `${dir}/ran`) });
    expect(await refused(run)).toMatch(said);
  });

  it("reads at most 4 MiB: 100 MB on stdin is refused at once, not read to its end", async () => {
    const started = Date.now();
    const run = startShim(SHIM, { holdStdin: true });
    const mb = Buffer.alloc(1 << 20, "a");
    const writes = (async () => {
      for (let i = 0; i < 100 && !run.child.stdin!.destroyed; i++) {
        if (!run.child.stdin!.write(mb)) await new Promise((r) => { run.child.stdin!.once("drain", r); run.child.stdin!.once("close", r); });
      }
      run.child.stdin!.end();
    })();
    expect(await refused(run)).toBe("outlive-shim: settings: more than 4194304 bytes on stdin\n");
    await writes;
    expect(Date.now() - started).toBeLessThan(20_000);
  });

  it("refuses arguments other than the task id", async () => {
    const run = startShim(SHIM, { args: ["t", "extra"], settings: { command: { argv: ["true"] } } });
    expect(await refused(run)).toMatch(/^outlive-shim: usage: outlive-shim TASK-ID/);
  });

  it("gives up on a caller that never closes stdin (after 30 s), rather than hang", async () => {
    const run = startShim(SHIM, { holdStdin: true });
    run.child.stdin!.write(fields("v=1", "id=x"));
    expect(await refused(run)).toMatch(/^outlive-shim: settings: stdin did not end within 30 s/);
  }, 90_000);
});
