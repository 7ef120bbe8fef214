import { chmodSync, chownSync, existsSync, lstatSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { networkInterfaces } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { outliveCli, tempDir } from "../support/cli.ts";
import { callTool, httpClient, httpServer } from "./support/servers.ts";

// outlive mcp --http: the SDK's client over Streamable HTTP, and every bad request the door must
// turn away sent over real HTTP to the real server (its own process, a temp storage).
const temp = tempDir("outlive-mcp-http-");
const storage = join(temp.dir, "storage");
const tokenFile = join(storage, "control", "mcp-token");
afterAll(() => {
  outliveCli(["stop-all", "--storage", storage]);
  temp.remove();
});

const INITIALIZE = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "0" } } });

/** One raw HTTP request with exactly these headers (fetch would not let a test set Host). */
function post(url: string, headers: Record<string, string>, body = INITIALIZE): Promise<{ status: number; body: string; headers: Record<string, unknown> }> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request({ host: target.hostname.replace(/^\[(.*)\]$/, "$1"), port: target.port, path: target.pathname, method: "POST", headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers } }, (res) => {
      let text = "";
      res.on("data", (chunk: Buffer) => (text += chunk.toString()));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text, headers: res.headers }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

describe("outlive mcp --http", () => {
  it("makes its token file (0600, a fresh random token) and serves the SDK's client that sends it", async () => {
    const server = await httpServer(storage);
    try {
      expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
      const stat = lstatSync(tokenFile);
      expect(stat.mode & 0o777).toBe(0o600);
      const token = readFileSync(tokenFile, "utf8").trim();
      expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(server.stderr()).toContain(`made a bearer token in ${tokenFile}`);
      expect(server.stderr()).not.toContain(token);

      const client = await httpClient(server.url, token);
      const { tools } = await client.listTools();
      expect(tools).toHaveLength(8);
      const run = await callTool(client, "run_task", { argv: ["sh", "-c", "echo via-http; exit 2"] });
      const waited = await callTool(client, "wait_task", { id: run.data.task.id, timeoutSeconds: 30 });
      expect(waited.data.task).toMatchObject({ state: "exited", exitCode: 2, reason: "exited with code 2" });
      await client.close();
    } finally {
      await server.stop();
    }
    // The next server reads the same token rather than making another.
    const again = await httpServer(storage);
    try {
      expect(again.stderr()).not.toContain("made a bearer token");
      const client = await httpClient(again.url, readFileSync(tokenFile, "utf8").trim());
      expect((await client.listTools()).tools).toHaveLength(8);
      await client.close();
    } finally {
      await again.stop();
    }
  });

  it("turns away, over real HTTP, a request without the token, with a wrong one, or whose Host or Origin is not the bound address", async () => {
    const server = await httpServer(storage);
    const token = readFileSync(tokenFile, "utf8").trim();
    const host = new URL(server.url).host;
    const port = new URL(server.url).port;
    try {
      const none = await post(server.url, { host });
      expect(none.status).toBe(401);
      expect(none.headers["www-authenticate"]).toBe("Bearer");
      expect(none.body).toContain("expected an Authorization: Bearer TOKEN header");

      const wrong = await post(server.url, { host, authorization: `Bearer ${token.slice(0, -1)}x` });
      expect(wrong.status).toBe(401);
      expect(wrong.body).toContain("the bearer token is not this server's");
      const shorter = await post(server.url, { host, authorization: "Bearer x" });
      expect(shorter.status).toBe(401);
      const basic = await post(server.url, { host, authorization: `Basic ${token}` });
      expect(basic.status).toBe(401);

      // DNS rebinding: a page on another site whose name now resolves to 127.0.0.1 sends its own name.
      const rebound = await post(server.url, { host: `evil.example.com:${port}`, authorization: `Bearer ${token}` });
      expect(rebound.status).toBe(403);
      expect(rebound.body).toContain('the Host header "evil.example.com:' + port + '" is not this server\'s address');
      const otherPort = await post(server.url, { host: `127.0.0.1:${Number(port) + 1}`, authorization: `Bearer ${token}` });
      expect(otherPort.status).toBe(403);
      const origin = await post(server.url, { host, origin: "http://evil.example.com", authorization: `Bearer ${token}` });
      expect(origin.status).toBe(403);
      expect(origin.body).toContain('the Origin "http://evil.example.com" is not this server\'s address');

      // The same request with the right headers passes (so the refusals above were the door's).
      const ok = await post(server.url, { host, origin: `http://${host}`, authorization: `Bearer ${token}` });
      expect(ok.status).toBe(200);
      const local = await post(server.url, { host: `localhost:${port}`, authorization: `Bearer ${token}` });
      expect(local.status).toBe(200);

      const elsewhere = await post(server.url.replace(/\/mcp$/, "/other"), { host, authorization: `Bearer ${token}` });
      expect(elsewhere.status).toBe(404);
      const notJson = await post(server.url, { host, authorization: `Bearer ${token}` }, "{not json");
      expect(notJson.status).toBe(400);
      expect(JSON.parse(notJson.body).error.code).toBe(-32700);
      const huge = await post(server.url, { host, authorization: `Bearer ${token}` }, "x".repeat((1 << 20) + 1));
      expect(huge.status).toBe(413);
      const stale = await post(server.url, { host, authorization: `Bearer ${token}`, "mcp-session-id": "no-such-session" }, JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" }));
      expect(stale.status).toBe(404);
      expect(JSON.parse(stale.body).error.message).toContain("no session no-such-session");
      const sessionless = await post(server.url, { host, authorization: `Bearer ${token}` }, JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" }));
      expect(sessionless.status).toBe(400);
      // None of it ended the server.
      expect(server.child.exitCode).toBe(null);
    } finally {
      await server.stop();
    }
    expect(server.child.exitCode).toBe(0);
    expect(server.stderr()).toContain("SIGTERM; closing (tasks run on)");
  });

  const ipv6 = Object.values(networkInterfaces()).flat().some((a) => a?.address === "::1");
  it.skipIf(!ipv6)("binds [::1] too, and takes that address (in brackets) as the Host", async () => {
    const server = await httpServer(storage, [], "[::1]:0");
    const token = readFileSync(tokenFile, "utf8").trim();
    try {
      expect(server.url).toMatch(/^http:\/\/\[::1\]:\d+\/mcp$/);
      const port = new URL(server.url).port;
      expect((await post(server.url, { host: `[::1]:${port}`, authorization: `Bearer ${token}` })).status).toBe(200);
      expect((await post(server.url, { host: `127.0.0.1:${port}`, authorization: `Bearer ${token}` })).status).toBe(403);
    } finally {
      await server.stop();
    }
  });
  if (!ipv6) console.log("skipped the [::1] door: this machine has no IPv6 loopback address");

  it("refuses an address other hosts could reach, naming it, before touching the storage", () => {
    const fresh = join(temp.dir, "never-made");
    for (const address of ["0.0.0.0:8765", "192.168.1.1:8765", "[::]:8765", "example.com:80"]) {
      const r = outliveCli(["mcp", "--storage", fresh, "--mode", "standalone", "--http", address]);
      expect(r.code, address).toBe(2);
      expect(r.err, address).toContain(`--http ${JSON.stringify(address)}`);
      expect(r.err, address).toContain("is not a loopback address");
    }
    const malformed = outliveCli(["mcp", "--storage", fresh, "--http", "8765"]);
    expect(malformed.code).toBe(2);
    expect(malformed.err).toContain("expected HOST:PORT, such as 127.0.0.1:8765");
    expect(existsSync(fresh)).toBe(false);
  });

  it("refuses a token file that is a symlink, another user's, open to group or others, or empty, naming it", () => {
    const dir = join(temp.dir, "tokens");
    mkdirSync(dir, { mode: 0o700 });
    const real = join(dir, "real");
    writeFileSync(real, "a-token-of-enough-characters\n", { mode: 0o600 });
    const cases: Array<[string, string, () => void]> = [
      ["link", "is a symbolic link", () => symlinkSync(real, join(dir, "link"))],
      ["group-readable", "so group or others may read or write it; expected 0600", () => writeFileSync(join(dir, "group-readable"), "a-token-of-enough-characters\n", { mode: 0o640 })],
      ["world-writable", "has mode 0602", () => {
        writeFileSync(join(dir, "world-writable"), "a-token-of-enough-characters\n", { mode: 0o600 });
        chmodSync(join(dir, "world-writable"), 0o602);
      }],
      ["empty", "holds no token", () => writeFileSync(join(dir, "empty"), "\n", { mode: 0o600 })],
      ["short", "holds a token of 5 characters", () => writeFileSync(join(dir, "short"), "abcde\n", { mode: 0o600 })],
    ];
    if (process.getuid?.() === 0) {
      cases.push(["others", "belongs to uid 65534, not to this user", () => {
        writeFileSync(join(dir, "others"), "a-token-of-enough-characters\n", { mode: 0o600 });
        chownSync(join(dir, "others"), 65534, 65534);
      }]);
    } else console.log("skipped the other user's token file: making a file another user owns needs root");
    const fresh = join(temp.dir, "untouched");
    for (const [name, problem, make] of cases) {
      make();
      const file = join(dir, name);
      const r = outliveCli(["mcp", "--storage", fresh, "--mode", "standalone", "--http", "127.0.0.1:0", "--token-file", file]);
      expect(r.code, name).toBe(2);
      expect(r.err, name).toContain(`the token file ${file} `);
      expect(r.err, name).toContain(problem);
    }
    // Refused before the storage was opened, and the files are as they were.
    expect(existsSync(fresh)).toBe(false);
    expect(readFileSync(real, "utf8")).toBe("a-token-of-enough-characters\n");
  });

  it("takes a token file of the user's own, and --token-file only with --http", async () => {
    const own = join(temp.dir, "own-token");
    writeFileSync(own, "my-own-token-0123456789\n", { mode: 0o600 });
    const server = await httpServer(storage, ["--token-file", own]);
    try {
      const client = await httpClient(server.url, "my-own-token-0123456789");
      expect((await client.listTools()).tools).toHaveLength(8);
      await client.close();
    } finally {
      await server.stop();
    }
    const stdio = outliveCli(["mcp", "--storage", storage, "--token-file", own]);
    expect(stdio.code).toBe(2);
    expect(stdio.err).toContain("--token-file is the token of --http");
  });
});
