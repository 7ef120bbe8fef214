import { describe, expect, it } from "vitest";
import { hostPort, isLoopback, parseHttpAddress } from "../../lib/mcp/http-address.ts";

describe("parseHttpAddress", () => {
  it("takes loopback addresses: 127.0.0.0/8, ::1, localhost (as 127.0.0.1)", () => {
    expect(parseHttpAddress("127.0.0.1:8765")).toEqual({ host: "127.0.0.1", port: 8765 });
    expect(parseHttpAddress("127.1.2.3:0")).toEqual({ host: "127.1.2.3", port: 0 });
    expect(parseHttpAddress("[::1]:9")).toEqual({ host: "::1", port: 9 });
    expect(parseHttpAddress("localhost:80")).toEqual({ host: "127.0.0.1", port: 80 });
  });

  it("refuses any other address, naming the value and why", () => {
    for (const text of ["0.0.0.0:1", "10.0.0.1:1", "[::]:1", "[fe80::1]:1", "example.com:1", "128.0.0.1:1"]) {
      expect(() => parseHttpAddress(text), text).toThrow(`--http ${JSON.stringify(text)}: `);
      expect(() => parseHttpAddress(text), text).toThrow("is not a loopback address");
    }
    for (const text of ["8765", "127.0.0.1", "127.0.0.1:", ":8765", "::1:8765", "127.0.0.1:x"]) {
      expect(() => parseHttpAddress(text), text).toThrow("expected HOST:PORT");
    }
    expect(() => parseHttpAddress("127.0.0.1:65536")).toThrow("the port 65536 is above 65535");
  });

  it("says an IPv6 host in brackets, as a URL and a Host header do", () => {
    expect(hostPort("::1", 80)).toBe("[::1]:80");
    expect(hostPort("127.0.0.1", 80)).toBe("127.0.0.1:80");
    expect(isLoopback("0:0:0:0:0:0:0:1")).toBe(true);
    expect(isLoopback("::2")).toBe(false);
  });
});
