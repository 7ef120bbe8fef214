import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { outliveCliAwaited, tempDir } from "../support/cli.ts";
import { freePort, pythonServer } from "../support/free-port.ts";

// Dev servers the way agents run them, through the CLI in a process of its own: real servers nobody here wrote
// (vite's dev server from npm, python's http.server), ready, on which port, kept running, restarted, held to limits.
const temp = tempDir("outlive-cli-dev-");
const storage = join(temp.dir, "storage");
const app = join(temp.dir, "app");
mkdirSync(app);
writeFileSync(join(app, "index.html"), "<!doctype html><h1>outlive</h1>\n");
const VITE = join(__dirname, "..", "..", "node_modules", "vite", "bin", "vite.js");
// Awaited: a --wait-ready run waits on a real server's start, which on a busy machine took over 20 s, and a
// synchronous call would hold the worker's event loop (and vitest's RPC) all that while.
const cli = (...args: string[]) => outliveCliAwaited([args[0], "--storage", storage, ...args.slice(1)]);
const taskIds = () => (existsSync(join(storage, "tasks")) ? readdirSync(join(storage, "tasks")) : []);
afterAll(async () => {
  await cli("stop-all");
  temp.remove();
});

describe("outlive run for a dev server, from the CLI", () => {
  it("vite: --wait-ready prints the id once its port accepts connections; ps shows the port; the same run --ensure gives the same id", async () => {
    const port = await freePort();
    const vite = ["--key", "web", "--ensure", "--cwd", app, "--ready-port", String(port), "--wait-ready", "--", process.execPath, VITE, "--port", String(port), "--strictPort", "--host", "127.0.0.1"];
    const first = await cli("run", ...vite);
    expect(first.code, first.err).toBe(0);
    const id = first.out.trim();
    expect(id).toMatch(/^t-[0-9a-f]{16}$/);
    const page = await fetch(`http://127.0.0.1:${port}/`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain("outlive");

    const ps = await cli("ps");
    const row = ps.out.split("\n").find((l) => l.startsWith(id))!;
    expect(ps.out.split("\n")[0]).toMatch(/\bPORTS\b/);
    expect(row).toContain(`127.0.0.1:${port}`);
    const json = JSON.parse((await cli("ps", "--json")).out).tasks.find((t: { id: string }) => t.id === id);
    expect(json.ports).toContainEqual({ proto: "tcp", address: "127.0.0.1", port });
    expect(json.readyAtSource).toBe("probe");

    const second = await cli("run", ...vite);
    expect(second.code, second.err).toBe(0);
    expect(second.out.trim()).toBe(id);
    expect(second.err).toContain(`kept ${id}`);
    const inspect = await cli("inspect", id);
    expect(inspect.out).toMatch(/ready when: +it listens on TCP \d+ \(wait up to 60 s\)/);
    expect(inspect.out).toMatch(new RegExp(`ports: +127\\.0\\.0\\.1:${port}`));
    expect(inspect.out).toMatch(/ready: +\S+Z \(.*\), from probe/);
  });

  it("python3 -m http.server: ready by its line and its URL; a changed spec replaces it and says what differed", async () => {
    const port = await freePort();
    const run = (...extra: string[]) => cli("run", "--key", "py", "--ensure", "--cwd", app, "--ready-log", "^Serving HTTP on", "--ready-http", `http://127.0.0.1:${port}/`, "--wait-ready", ...extra, "--", ...pythonServer(port));
    const first = await run();
    expect(first.code, first.err).toBe(0);
    const record = JSON.parse((await cli("inspect", "--json", first.out.trim())).out);
    expect(record).toMatchObject({ readyAt: expect.any(String), ports: [{ proto: "tcp", address: "127.0.0.1", port }] });
    const changed = await run("--restart", "on-failure");
    expect(changed.code, changed.err).toBe(0);
    expect(changed.out.trim()).not.toBe(first.out.trim());
    expect(changed.err).toContain(`replaced ${first.out.trim()} under key "py": its restart differed`);
  });

  it("--wait-ready fails with exit 1 and the task's state, reason and last output when it ends first", async () => {
    const r = await cli("run", "--ready-port", "1", "--wait-ready", "--shell", "echo 'Error: port is already in use' >&2; exit 1");
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/exited before it was ready \(exited with code 1\); last output:\n\[stderr\]\nError: port is already in use/);
    expect(r.err).toContain("[E_NOT_READY]");
  });

  it("refuses bad input at the door, naming the flag, with nothing stored", async () => {
    const before = taskIds().length;
    const bad = async (flags: string[], message: RegExp) => {
      const r = await cli("run", ...flags, "--", "true");
      expect(r.code, flags.join(" ")).toBe(2);
      expect(r.err, flags.join(" ")).toMatch(message);
    };
    await bad(["--ready-log", "(oops"], /Expected --ready-log to be a regular expression that compiles/);
    await bad(["--ready-port", "0"], /Expected --ready-port to be a TCP port/);
    await bad(["--ready-port", "65536"], /Expected --ready-port to be a TCP port/);
    await bad(["--ready-http", "ftp://localhost/"], /Expected --ready-http to be an http:\/\/ or https:\/\/ URL \(its scheme is ftp\)/);
    await bad(["--env-file", join(temp.dir, "nope.env")], /Expected --env-file to be a readable dotenv file \(ENOENT/);
    writeFileSync(join(temp.dir, "bad.env"), "GOOD=1\nnot an assignment\n");
    await bad(["--env-file", join(temp.dir, "bad.env")], /Expected --env-file to be a readable dotenv file \(line 2 is not NAME=value/);
    await bad(["--restart", "always", "--restart-delay", "0"], /Expected --restart-delay to be a number of seconds from 0\.001/);
    await bad(["--restart", "always", "--restart-max", "0"], /Expected --restart-max to be an integer from 1/);
    await bad(["--restart", "always", "--restart-max", "-2"], /Expected --restart-max/);
    await bad(["--restart", "sometimes"], /Expected --restart to be "on-failure" or "always"/);
    await bad(["--ensure"], /Expected --ensure to be given with a key/);
    await bad(["--wait-ready"], /Expected --wait-ready to be given with readyLog/);
    await bad(["--pids", "0"], /Expected --pids to be an integer from 1/);
    await bad(["--cpu", "-1"], /Expected --cpu to be a number of cores/);
    expect(taskIds().length).toBe(before);
  });

  it("--env-file: the task gets the values; no command line, record or output of outlive's holds them", async () => {
    writeFileSync(join(temp.dir, "app.env"), "# app settings\nDEV_TOKEN=tok-7f3a9c-secret\nexport GREETING='hello there'\n");
    const r = await cli("run", "--env-file", join(temp.dir, "app.env"), "--env", "GREETING=overridden", "--shell", 'echo "$GREETING $DEV_TOKEN"; sleep 30');
    expect(r.code, r.err).toBe(0);
    const id = r.out.trim();
    const dir = join(storage, "tasks", id);
    const record = readFileSync(join(dir, "record.json"), "utf8");
    expect(record).not.toContain("tok-7f3a9c");
    expect(JSON.parse(record)).toMatchObject({ envNames: ["DEV_TOKEN", "GREETING"], envFile: join(temp.dir, "app.env") });
    const { waitFor } = await import("../support/wait.ts");
    await waitFor("its output", () => readFileSync(join(dir, "io", "stdout"), "utf8").includes("overridden tok-7f3a9c-secret"));
    const pid = JSON.parse(readFileSync(join(dir, "record.json"), "utf8")).pid as number;
    expect(readFileSync(`/proc/${pid}/cmdline`, "utf8")).not.toContain("tok-7f3a9c");
    expect((await cli("inspect", id)).out).toMatch(/env file: .*app\.env \(read at run; values not kept\)/);
  });

  it("--restart is refused with the reason under the shell wrapper; --cpu and --pids where the placement cannot limit", async () => {
    const wrapper = await outliveCliAwaited(["run", "--storage", storage, "--restart", "always", "--", "true"], { ...process.env, OUTLIVE_SHIM: "none" });
    expect(wrapper.code).toBe(1);
    expect(wrapper.err).toMatch(/tasks run under the shell wrapper .* carried out by outlive-shim \[E_RESTART_UNSUPPORTED\]/);
    const pg = await cli("run", "--cpu", "0.5", "--", "true");
    expect(pg.code).toBe(1);
    expect(pg.err).toMatch(/Cannot limit cpu to 0\.5 cores in the process-group placement here: a process group has no cgroup of its own .*\[E_LIMIT_UNSUPPORTED\]/);
  });
});
