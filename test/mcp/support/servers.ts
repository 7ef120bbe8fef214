import { spawn, type ChildProcess } from "node:child_process";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { CLI } from "../../support/cli.ts";
import { readProcStat } from "../../../lib/proc/stat.ts";

/** `outlive mcp` on stdio, spawned by the SDK's own client as an agent's harness spawns it. */
export async function stdioClient(storage: string, args: string[] = [], cwd?: string): Promise<{ client: Client; pid: number; stderr: () => string; close(): Promise<void> }> {
  const transport = new StdioClientTransport({ command: process.execPath, args: [CLI, "mcp", "--storage", storage, "--mode", "standalone", ...args], stderr: "pipe", cwd });
  let stderr = "";
  transport.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const client = new Client({ name: "outlive-test", version: "0" });
  await client.connect(transport);
  return { client, pid: transport.pid as number, stderr: () => stderr, close: () => client.close() };
}

/** `outlive mcp --http` in a process of its own; resolves once it says where it listens (or rejects with its stderr when it exits first). */
export async function httpServer(storage: string, args: string[] = [], address = "127.0.0.1:0"): Promise<{ url: string; child: ChildProcess; stderr: () => string; stop(): Promise<void> }> {
  const child = spawn(process.execPath, [CLI, "mcp", "--storage", storage, "--mode", "standalone", "--http", address, ...args], { stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  const url = await new Promise<string>((resolve, reject) => {
    child.stderr!.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
      const found = /listening on (\S+)/.exec(stderr);
      if (found) resolve(found[1]);
    });
    child.once("exit", (code) => reject(new Error(`outlive mcp --http exited ${code} before listening: ${stderr}`)));
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  return {
    url,
    child,
    stderr: () => stderr,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      await exited;
    },
  };
}

/** The SDK's client over Streamable HTTP, with the bearer token. */
export async function httpClient(url: string, token: string): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } });
  const client = new Client({ name: "outlive-test", version: "0" });
  await client.connect(transport);
  return client;
}

/** A tool call's answer: its text, its structured content, and whether it is a tool error. */
export async function callTool(client: Client, name: string, args: Record<string, unknown> = {}): Promise<{ text: string; data: Record<string, any>; isError: boolean }> {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  const text = result.content.map((c) => (c.type === "text" ? c.text : "")).join("\n");
  return { text, data: (result.structuredContent ?? {}) as Record<string, any>, isError: result.isError === true };
}

/**
 * Whether a process has ended: signal 0 fails, or it is a zombie. Under a PID 1 that reaps no orphan (npm or
 * vitest as PID 1 of a pid namespace, as in `.ci/loaded`), a task whose server was SIGKILLed is handed to it and
 * stays a zombie once dead; the library counts a zombie as ended too (lib/proc/identity.ts).
 */
export function gone(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return true;
  }
  return readProcStat(pid)?.state === "Z";
}
