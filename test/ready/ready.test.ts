import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { Supervisor } from "../../lib/mod.ts";
import { tempDir } from "../support/cli.ts";
import { freePort, pythonServer } from "../support/free-port.ts";

// Readiness on real servers: python's http.server, started by a supervisor in process.
const { dir: storage, remove } = tempDir("outlive-ready-");
let sup: Supervisor | null = null;
afterEach(async () => {
  if (sup) {
    await sup.stopAll().catch(() => {});
    await sup.close();
  }
  sup = null;
});
afterAll(remove);
const open = async () => (sup = await Supervisor.open({ storage, mode: "standalone", log: () => {} }));

describe("readiness", () => {
  it("run with waitReady answers once the port is listened on, dated by the probe; the port is the task's own", async () => {
    const s = await open();
    const port = await freePort();
    const task = await s.run({ argv: pythonServer(port), readyPort: port, waitReady: true });
    expect(task.state).toBe("running");
    expect(task.readyAtSource).toBe("probe");
    expect(Date.parse(task.readyAt!)).toBeGreaterThanOrEqual(Date.parse(task.startedAt!));
    expect(s.ports([task]).get(task.id)).toEqual([{ proto: "tcp", address: "127.0.0.1", port }]);
    // On disk as answered.
    const stored = JSON.parse(readFileSync(join(storage, "tasks", task.id, "record.json"), "utf8"));
    expect(stored).toMatchObject({ readyAt: task.readyAt, readyAtSource: "probe", ready: { log: null, port, http: null, timeoutSeconds: 60 } });
    expect(stored.ports).toBeUndefined();
  });

  it("a line of output, a URL, or all three: ready once each held, dated by the last", async () => {
    const s = await open();
    const port = await freePort();
    const byLine = await s.run({ argv: pythonServer(port), readyLog: `^Serving HTTP on .* port ${port}`, waitReady: true });
    expect(byLine.readyAtSource).toBe("line-seen");
    await s.kill(byLine.id);
    const port2 = await freePort();
    const all = await s.run({ argv: pythonServer(port2), readyLog: "Serving HTTP", readyPort: port2, readyHttp: `http://127.0.0.1:${port2}/`, waitReady: true });
    expect(all.readyAt).not.toBeNull();
    expect(["line-seen", "probe"]).toContain(all.readyAtSource);
  });

  it("fails with E_NOT_READY, the state, the reason and the last output, when the task ends first", async () => {
    const s = await open();
    const error = await s.run({ shell: "echo 'Error: listen EADDRINUSE: address already in use :::5173' >&2; exit 1", readyPort: 5173, waitReady: true }).catch((e) => e);
    expect(error.code).toBe("E_NOT_READY");
    expect(error.message).toMatch(/exited before it was ready \(exited with code 1\); last output:\n\[stderr\]\nError: listen EADDRINUSE/);
    expect(error.task).toMatchObject({ state: "exited", exitCode: 1, readyAt: null });
  });

  it("fails with E_NOT_READY when its ready timeout passes, and the task runs on", async () => {
    const s = await open();
    const error = await s.run({ shell: "echo starting; sleep 60", readyLog: "never printed", readyTimeoutSeconds: 0.5, waitReady: true }).catch((e) => e);
    expect(error.code).toBe("E_NOT_READY");
    expect(error.message).toMatch(/is not ready after 0\.5 s \(its ready timeout\); it runs on, running; last output:\nstarting/);
    expect(s.get(error.task.id).state).toBe("running");
    // waitReady on a task without a condition is refused: there is nothing to wait for.
    const plain = await s.run({ argv: ["sleep", "60"] });
    await expect(s.waitReady(plain.id)).rejects.toMatchObject({ code: "E_BAD_OPTION" });
  });

  it("a task that became ready while no supervisor ran is dated by the first probe after replay; an adopted task keeps its readyAt", async () => {
    let s = await open();
    const port = await freePort();
    // It starts listening only once the test says so, after the first supervisor closed: on a busy machine a fixed
    // delay could end while that supervisor still probed it.
    const go = join(storage, `go-${port}`);
    const late = await s.run({ shell: `while [ ! -e ${go} ]; do sleep 0.05; done; exec ${pythonServer(port).join(" ")}`, readyPort: port });
    const portEarly = await freePort();
    const early = await s.run({ argv: pythonServer(portEarly), readyPort: portEarly, waitReady: true });
    await s.close();
    sup = null;
    writeFileSync(go, "");
    // The server comes up while no supervisor runs.
    await new Promise<void>((resolve, reject) => {
      const started = Date.now();
      const look = () => import("node:net").then(({ connect }) => {
        const c = connect(port, "127.0.0.1");
        c.once("connect", () => (c.destroy(), resolve()));
        c.once("error", () => (Date.now() - started > 20_000 ? reject(new Error("never listened")) : setTimeout(look, 50)));
      });
      void look();
    });
    const closedAt = Date.now();
    s = await open();
    const ready = await s.waitReady(late.id);
    expect(ready.readyAtSource).toBe("probe-after-replay");
    expect(Date.parse(ready.readyAt!)).toBeGreaterThanOrEqual(closedAt);
    expect(s.get(early.id)).toMatchObject({ readyAt: early.readyAt, readyAtSource: "probe" });
    expect(late.readyAt).toBeNull();
  });
});
