import { createServer, request, type Server } from "node:http";

/**
 * A loopback forwarder that adds `Authorization: Bearer TOKEN` to every
 * request and passes it on to `outlive mcp --http`, byte for byte both
 * ways (SSE streams too). It exists because the conformance runner
 * (`conformance server --url`) has no way to send a header, while the
 * server rightly refuses a request without the token. A Host or Origin
 * that names the forwarder is rewritten to name the server (they are the
 * same loopback door, one hop apart); any other value, such as the
 * runner's `evil.example.com`, is passed on untouched for the server to
 * refuse. Only for tests.
 */
export async function bearerForwarder(target: URL, token: string): Promise<{ url: string; close(): Promise<void> }> {
  let self = "";
  const server: Server = createServer((req, res) => {
    const headers = { ...req.headers, authorization: `Bearer ${token}` };
    if (headers.host === self) headers.host = target.host;
    if (headers.origin === `http://${self}`) headers.origin = `http://${target.host}`;
    const out = request({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    out.on("error", () => res.headersSent ? res.end() : res.writeHead(502).end());
    req.pipe(out);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  self = `127.0.0.1:${port}`;
  return {
    url: `http://${self}${target.pathname}`,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
