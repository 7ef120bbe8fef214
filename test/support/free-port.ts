import { createServer } from "node:net";

/** A TCP port nothing listens on at this moment, on 127.0.0.1 (the kernel's choice; another may take it later). */
export async function freePort(): Promise<number> {
  const server = createServer().listen(0, "127.0.0.1");
  await new Promise((r) => server.once("listening", r));
  const { port } = server.address() as { port: number };
  await new Promise((r) => server.close(r));
  return port;
}

/** `python3 -m http.server PORT` on 127.0.0.1, unbuffered so its "Serving HTTP" line comes as it is printed. */
export function pythonServer(port: number): string[] {
  return ["python3", "-u", "-m", "http.server", String(port), "--bind", "127.0.0.1"];
}
