import { isIPv4, isIPv6 } from "node:net";
import { OutliveError } from "../errors.ts";

/** Where `outlive mcp --http` listens: a loopback address and a port (0: one the system picks). */
export interface HttpAddress {
  /** The literal address bound: `127.x.x.x` or `::1`. */
  host: string;
  port: number;
}

/**
 * `--http`'s value, `127.0.0.1:PORT`, `[::1]:PORT` or `localhost:PORT`
 * (bound as 127.0.0.1). The HTTP door leads into the user's shell, so any
 * address other hosts could reach is refused, with the reason. Pure.
 *
 * @example
 * ```ts
 * import { parseHttpAddress } from "./http-address.ts";
 * console.log(parseHttpAddress("127.0.0.1:8765")); // { host: "127.0.0.1", port: 8765 }
 * console.log(parseHttpAddress("[::1]:0")); // { host: "::1", port: 0 }
 * ```
 */
export function parseHttpAddress(text: string): HttpAddress {
  const match = /^(?:\[([^\]]+)\]|([^:]+)):(\d{1,5})$/.exec(text.trim());
  if (!match) throw bad(text, "expected HOST:PORT, such as 127.0.0.1:8765");
  const name = (match[1] ?? match[2]).toLowerCase();
  const port = Number(match[3]);
  if (port > 65535) throw bad(text, `the port ${port} is above 65535`);
  const host = name === "localhost" ? "127.0.0.1" : name;
  if (!isLoopback(host)) {
    throw bad(text, `${name} is not a loopback address; the HTTP door runs commands as you, so it binds 127.0.0.1, ::1 or localhost only`);
  }
  return { host, port };
}

/** Whether `host` is a literal loopback address (127.0.0.0/8 or ::1). Pure. */
export function isLoopback(host: string): boolean {
  if (isIPv4(host)) return host.split(".")[0] === "127";
  return isIPv6(host) && /^(0{0,4}:){2,7}0{0,3}1$|^::1$/.test(host);
}

/** The address as it appears in a URL and a Host header: IPv6 in brackets. */
export function hostPort(host: string, port: number): string {
  return `${host.includes(":") ? `[${host}]` : host}:${port}`;
}

function bad(text: string, expected: string): OutliveError {
  return new OutliveError("E_BAD_OPTION", `--http ${JSON.stringify(text)}: ${expected}`);
}
