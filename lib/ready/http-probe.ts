import { request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";

/**
 * Whether `url` answers a GET with a 2xx or 3xx status within `timeoutMs`
 * (a redirect is not followed: being redirected is an answer). An https
 * URL's certificate is not checked: dev servers serve self-signed ones, and
 * the answer only says the server is up.
 *
 * @example
 * ```ts
 * import { createServer } from "node:http";
 * import { httpAnswers } from "./http-probe.ts";
 * const server = createServer((_, res) => res.end("ok")).listen(0, "127.0.0.1");
 * await new Promise((r) => server.once("listening", r));
 * const { port } = server.address() as { port: number };
 * console.log(await httpAnswers(`http://127.0.0.1:${port}/`, 1000)); // true
 * server.close();
 * console.log(await httpAnswers(`http://127.0.0.1:${port}/`, 1000)); // false: nothing listens
 * ```
 */
export function httpAnswers(url: string, timeoutMs: number, signal?: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    const https = url.startsWith("https:");
    const options = { method: "GET", timeout: timeoutMs, signal, headers: { "user-agent": "outlive-ready-probe" }, ...(https ? { rejectUnauthorized: false } : {}) };
    let settled = false;
    const done = (ok: boolean) => {
      if (settled) return;
      settled = true;
      resolve(ok);
    };
    try {
      const req = (https ? httpsRequest : httpRequest)(url, options, (res) => {
        res.resume();
        const status = res.statusCode ?? 0;
        done(status >= 200 && status < 400);
        req.destroy();
      });
      req.on("timeout", () => req.destroy());
      req.on("error", () => done(false));
      req.on("close", () => done(false));
      req.end();
    } catch {
      done(false);
    }
  });
}
