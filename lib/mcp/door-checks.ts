import { createHash, timingSafeEqual } from "node:crypto";
import { hostPort } from "./http-address.ts";

/** What the door looks at in a request: its headers as Node gives them (lower-case names). */
export interface DoorRequest {
  host?: string;
  origin?: string;
  authorization?: string;
}

/** What the door lets in: the Host values that name the bound address, and the token's digest. */
export interface DoorPolicy {
  allowedHosts: ReadonlySet<string>;
  tokenDigest: Buffer;
}

/** Why a request is turned away: the HTTP status and a message naming what was wrong. */
export interface DoorRefusal {
  status: 401 | 403;
  message: string;
  headers?: Record<string, string>;
}

/**
 * The policy for a door bound at `host:port` with `token`: the bound
 * address itself and `localhost` on that port (a browser resolves
 * `localhost` to loopback itself, so it cannot be rebound to another site).
 *
 * @example
 * ```ts
 * import { doorPolicy } from "./door-checks.ts";
 * console.log([...doorPolicy("127.0.0.1", 8765, "a-long-enough-token").allowedHosts]); // ["127.0.0.1:8765", "localhost:8765"]
 * ```
 */
export function doorPolicy(host: string, port: number, token: string): DoorPolicy {
  return { allowedHosts: new Set([hostPort(host, port), `localhost:${port}`]), tokenDigest: digest(token) };
}

/**
 * Whether a request may pass the door, null when it may. Pure. In this
 * order: its `Host` must name the bound address, and an `Origin`, when
 * sent, must be that address too (a page on another site that rebinds its
 * name to 127.0.0.1 sends its own name in both); then `Authorization:
 * Bearer TOKEN` must carry the token, compared in constant time (both
 * sides hashed first, so the comparison's length says nothing of the
 * token's).
 *
 * @example
 * ```ts
 * import { checkDoor, doorPolicy } from "./door-checks.ts";
 * const policy = doorPolicy("127.0.0.1", 8765, "a-long-enough-token");
 * console.log(checkDoor({ host: "127.0.0.1:8765", authorization: "Bearer a-long-enough-token" }, policy)); // null
 * console.log(checkDoor({ host: "evil.example:8765", authorization: "Bearer a-long-enough-token" }, policy)?.status); // 403
 * ```
 */
export function checkDoor(request: DoorRequest, policy: DoorPolicy): DoorRefusal | null {
  const host = request.host?.toLowerCase();
  if (host === undefined || !policy.allowedHosts.has(host)) {
    return { status: 403, message: `the Host header ${JSON.stringify(request.host ?? null)} is not this server's address; expected one of ${[...policy.allowedHosts].join(", ")}` };
  }
  if (request.origin !== undefined) {
    const origin = request.origin.toLowerCase();
    const allowed = [...policy.allowedHosts].map((h) => `http://${h}`);
    if (!allowed.includes(origin)) {
      return { status: 403, message: `the Origin ${JSON.stringify(request.origin)} is not this server's address; expected one of ${allowed.join(", ")}, or no Origin` };
    }
  }
  const bearer = /^Bearer +(\S+) *$/i.exec(request.authorization ?? "")?.[1];
  if (bearer === undefined) {
    return { status: 401, message: "expected an Authorization: Bearer TOKEN header, with the token from the server's --token-file", headers: { "WWW-Authenticate": "Bearer" } };
  }
  if (!timingSafeEqual(digest(bearer), policy.tokenDigest)) {
    return { status: 401, message: "the bearer token is not this server's (see its --token-file)", headers: { "WWW-Authenticate": 'Bearer error="invalid_token"' } };
  }
  return null;
}

function digest(text: string): Buffer {
  return createHash("sha256").update(text, "utf8").digest();
}
