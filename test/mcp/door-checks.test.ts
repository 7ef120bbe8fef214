import { describe, expect, it } from "vitest";
import { checkDoor, doorPolicy } from "../../lib/mcp/door-checks.ts";

// The HTTP door's decision, on plain data (http.test.ts sends the same cases over real HTTP).
const TOKEN = "a-token-of-enough-characters";
const v4 = doorPolicy("127.0.0.1", 8765, TOKEN);
const v6 = doorPolicy("::1", 8765, TOKEN);
const auth = `Bearer ${TOKEN}`;

describe("checkDoor", () => {
  it("lets in the bound address or localhost on its port, with no Origin or a matching one, and the token", () => {
    expect(checkDoor({ host: "127.0.0.1:8765", authorization: auth }, v4)).toBe(null);
    expect(checkDoor({ host: "LOCALHOST:8765", origin: "http://localhost:8765", authorization: auth }, v4)).toBe(null);
    expect(checkDoor({ host: "[::1]:8765", origin: "http://[::1]:8765", authorization: auth }, v6)).toBe(null);
    expect(checkDoor({ host: "127.0.0.1:8765", authorization: `bearer  ${TOKEN}` }, v4)).toBe(null);
  });

  it("refuses a Host that is not the bound address (403), before looking at the token", () => {
    for (const host of [undefined, "evil.example.com:8765", "127.0.0.1:8766", "127.0.0.1", "127.0.0.2:8765", "[::1]:8765"]) {
      const refusal = checkDoor({ host, authorization: auth }, v4);
      expect(refusal?.status, String(host)).toBe(403);
      expect(refusal?.message, String(host)).toContain("expected one of 127.0.0.1:8765, localhost:8765");
    }
    expect(checkDoor({ host: "evil.example.com:8765" }, v4)?.status).toBe(403);
  });

  it("refuses an Origin of another site, another port or scheme, or the opaque null (403)", () => {
    for (const origin of ["http://evil.example.com", "http://127.0.0.1:9999", "https://127.0.0.1:8765", "null", ""]) {
      expect(checkDoor({ host: "127.0.0.1:8765", origin, authorization: auth }, v4)?.status, origin).toBe(403);
    }
  });

  it("refuses a missing, malformed or wrong token (401, with WWW-Authenticate)", () => {
    for (const authorization of [undefined, "", "Bearer", `Basic ${TOKEN}`, `Bearer ${TOKEN}x`, `Bearer ${TOKEN.slice(1)}`, "Bearer x", `Bearer ${TOKEN} extra`]) {
      const refusal = checkDoor({ host: "127.0.0.1:8765", authorization }, v4);
      expect(refusal?.status, String(authorization)).toBe(401);
      expect(refusal?.headers?.["WWW-Authenticate"], String(authorization)).toMatch(/^Bearer/);
    }
  });
});
