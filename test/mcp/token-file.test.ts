import { chmodSync, lstatSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadToken } from "../../lib/mcp/token-file.ts";
import { tempDir } from "../support/cli.ts";

// The library's token file on real files (http.test.ts checks the same through the CLI).
const temp = tempDir("outlive-mcp-token-");
afterAll(() => temp.remove());

describe("loadToken", () => {
  it("makes a missing file (and its 0700 directory) with mode 0600 and a fresh token, then reads it back", () => {
    const file = join(temp.dir, "control", "mcp-token");
    const made = loadToken(file);
    expect(made.made).toBe(true);
    expect(made.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(lstatSync(file).mode & 0o777).toBe(0o600);
    expect(lstatSync(join(temp.dir, "control")).mode & 0o777).toBe(0o700);
    expect(loadToken(file)).toEqual({ token: made.token, made: false });
    const other = loadToken(join(temp.dir, "control", "other-token"));
    expect(other.token).not.toBe(made.token);
  });

  it("refuses a symlink even to a good file, and a file open to group or others, and leaves both as they were", () => {
    const good = join(temp.dir, "good");
    writeFileSync(good, "good-token-0123456789\n", { mode: 0o600 });
    const link = join(temp.dir, "link");
    symlinkSync(good, link);
    expect(() => loadToken(link)).toThrow(`the token file ${link} is a symbolic link`);
    const loose = join(temp.dir, "loose");
    writeFileSync(loose, "good-token-0123456789\n", { mode: 0o600 });
    chmodSync(loose, 0o604);
    expect(() => loadToken(loose)).toThrow(`the token file ${loose} has mode 0604, so group or others may read or write it; expected 0600 (chmod 600 ${loose})`);
    expect(readFileSync(loose, "utf8")).toBe("good-token-0123456789\n");
    expect(lstatSync(loose).mode & 0o777).toBe(0o604);
    expect(loadToken(good).token).toBe("good-token-0123456789");
  });

  it("refuses a directory, and a token with white space inside it", () => {
    expect(() => loadToken(temp.dir)).toThrow("is not a regular file");
    const spaced = join(temp.dir, "spaced");
    writeFileSync(spaced, "good-token 0123456789\n", { mode: 0o600 });
    expect(() => loadToken(spaced)).toThrow("holds white space inside the token");
  });
});
