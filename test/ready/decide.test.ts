import { createServer } from "node:http";
import { describe, expect, it } from "vitest";
import { probeInterval, readyMoment } from "../../lib/ready/decide-ready.ts";
import { httpAnswers } from "../../lib/ready/http-probe.ts";
import { LineMatcher } from "../../lib/ready/line-matcher.ts";
import { checkReadySpec } from "../../lib/ready/ready-spec.ts";

const bad = (name: string, expected: string, v: unknown) => new Error(`${name}: ${expected}, got ${JSON.stringify(v)}`);
const spec = { log: null, port: null, http: null, timeoutSeconds: 60 };
const enc = (s: string) => new TextEncoder().encode(s);

describe("readiness, decided from plain data", () => {
  it("checks each field, naming it: a pattern that does not compile, a port out of range, a URL that is not http(s), a timeout with nothing to wait for", () => {
    expect(checkReadySpec({}, bad)).toBeNull();
    expect(checkReadySpec({ readyLog: "ready in \\d+", readyPort: 5173, readyHttp: "https://localhost:5173/", readyTimeoutSeconds: 5 }, bad))
      .toEqual({ log: "ready in \\d+", port: 5173, http: "https://localhost:5173/", timeoutSeconds: 5 });
    expect(() => checkReadySpec({ readyLog: "(unclosed" }, bad)).toThrow(/^readyLog: a regular expression that compiles \(.*\)/);
    expect(() => checkReadySpec({ readyLog: "" }, bad)).toThrow(/^readyLog/);
    for (const port of [0, 65536, 1.5, -1, "80" as never]) expect(() => checkReadySpec({ readyPort: port }, bad)).toThrow(/^readyPort: a TCP port/);
    expect(() => checkReadySpec({ readyHttp: "ftp://x/" }, bad)).toThrow(/^readyHttp: an http:\/\/ or https:\/\/ URL \(its scheme is ftp\)/);
    expect(() => checkReadySpec({ readyHttp: "not a url" }, bad)).toThrow(/^readyHttp: .*does not parse/);
    expect(() => checkReadySpec({ readyTimeoutSeconds: 5 }, bad)).toThrow(/^readyTimeoutSeconds: given with readyLog/);
    expect(() => checkReadySpec({ readyPort: 80, readyTimeoutSeconds: 0 }, bad)).toThrow(/^readyTimeoutSeconds: a number of seconds > 0/);
  });

  it("is ready once every condition was seen, at the last one's moment, dated by what saw it", () => {
    const all = { ...spec, log: "x", port: 1, http: "http://a/" };
    expect(readyMoment(all, { log: { at: 5, afterReplay: false }, port: { at: 7, afterReplay: false } })).toBeNull();
    expect(readyMoment(all, { log: { at: 9, afterReplay: false }, port: { at: 7, afterReplay: false }, http: { at: 8, afterReplay: false } })).toEqual({ at: 9, source: "line-seen" });
    expect(readyMoment({ ...spec, http: "http://a/" }, { http: { at: 3, afterReplay: false } })).toEqual({ at: 3, source: "probe" });
    expect(readyMoment({ ...spec, port: 1 }, { port: { at: 3, afterReplay: true } })).toEqual({ at: 3, source: "probe-after-replay" });
    expect(readyMoment(spec, {})).toBeNull();
  });

  it("probes often at first, less and less after", () => {
    const seq = [0, 9_999, 10_000, 59_999, 60_000, 299_999, 300_000, 3_600_000].map(probeInterval);
    expect(seq).toEqual([20, 20, 100, 100, 500, 500, 1000, 1000]);
  });

  it("matches a line across chunks and streams, without its colour escapes, a character cut between chunks joined", () => {
    const m = new LineMatcher(/^\s*➜\s+Local:\s+http/);
    const line = enc("  \x1b[32m➜\x1b[39m  \x1b[1mLocal\x1b[22m:   \x1b[36mhttp://localhost:5173/\x1b[39m\n");
    const cut = line.indexOf(0x9e); // inside the three bytes of ➜
    expect(m.feed("stdout", line.slice(0, cut))).toBe(false);
    expect(m.feed("stderr", enc("Local: noise on the other stream\n"))).toBe(false);
    expect(m.feed("stdout", line.slice(cut))).toBe(true);
    const partial = new LineMatcher(/listening on \d+/);
    expect(partial.feed("stdout", enc("listening on 80"))).toBe(true);
    const dropped = new LineMatcher(/^ready$/);
    expect(dropped.feed("stdout", enc("rea"))).toBe(false);
    dropped.skip("stdout");
    expect(dropped.feed("stdout", enc("dy\n"))).toBe(false);
    expect(dropped.feed("stdout", enc("ready\n"))).toBe(true);
  });

  it("an HTTP probe counts 2xx and 3xx, not 4xx, 5xx or nothing listening, and follows no redirect", async () => {
    const server = createServer((req, res) => {
      const status = Number(req.url!.slice(1));
      res.writeHead(status, status === 302 ? { location: "/500" } : {}).end();
    }).listen(0, "127.0.0.1");
    await new Promise((r) => server.once("listening", r));
    const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    const got = await Promise.all([200, 204, 302, 404, 500].map((s) => httpAnswers(`${base}/${s}`, 2000)));
    expect(got).toEqual([true, true, true, false, false]);
    await new Promise((r) => server.close(r));
    expect(await httpAnswers(`${base}/200`, 2000)).toBe(false);
  });
});
