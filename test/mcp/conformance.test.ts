import { execFile } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { outliveCli, tempDir } from "../support/cli.ts";
import { bearerForwarder } from "./support/bearer-forwarder.ts";
import { httpServer } from "./support/servers.ts";

// The MCP conformance suite's server scenarios (@modelcontextprotocol/conformance) that apply to a
// server of tools, against outlive mcp --http. The runner needs Node >= 22 (fs.globSync), so it
// runs under the project's Deno. It cannot send a header, so a forwarder adds the bearer token
// (support/bearer-forwarder.ts). The others need tools, prompts, resources or capabilities that
// only the suite's own test server has; docs/contributing/tests.md lists them and why.
const root = join(__dirname, "..", "..");
const DENO = join(root, "node_modules", ".bin", "deno");
const RUNNER = join(root, "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js");
const SCENARIOS = ["server-initialize", "ping", "tools-list", "server-sse-multiple-streams", "dns-rebinding-protection"];

const temp = tempDir("outlive-mcp-conformance-");
const storage = join(temp.dir, "storage");
afterAll(() => {
  outliveCli(["stop-all", "--storage", storage]);
  temp.remove();
});

const missing = [DENO, RUNNER].filter((file) => !existsSync(file));

function conformance(url: string, scenario: string): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    // Asynchronously: the forwarder runs in this process and must answer meanwhile.
    execFile(DENO, ["run", "-A", RUNNER, "server", "--url", url, "--scenario", scenario], { timeout: 120_000, env: { ...process.env, NO_COLOR: "1" } }, (error, out, err) =>
      resolve({ code: error ? (typeof error.code === "number" ? error.code : -1) : 0, out: `${out}${err}` }));
  });
}

describe.skipIf(missing.length > 0)("outlive mcp --http against the MCP conformance suite", () => {
  if (missing.length > 0) console.log(`skipped: ${missing.join(" and ")} missing (npm ci installs them)`);

  it.each(SCENARIOS)("passes %s", async (scenario) => {
    const server = await httpServer(storage);
    const forwarder = await bearerForwarder(new URL(server.url), readFileSync(join(storage, "control", "mcp-token"), "utf8").trim());
    try {
      const r = await conformance(forwarder.url, scenario);
      expect(r.code, r.out).toBe(0);
      expect(r.out).toMatch(/Passed: (\d+)\/\1, 0 failed/);
    } finally {
      await forwarder.close();
      await server.stop();
    }
  });

  it("without the token, the same runner is turned away (so the forwarder's token is what let it in)", async () => {
    const server = await httpServer(storage);
    try {
      const r = await conformance(server.url, "tools-list");
      expect(r.code).not.toBe(0);
      expect(r.out).toMatch(/FAILURE/);
    } finally {
      await server.stop();
    }
  });
});
