import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { hostDebianMirror, requireMirror } from "../../harness/host/container/image/apt-mirror.ts";
import { resolveOptions } from "../../harness/host/container/options.ts";

// The containers are built from the mirror this host's apt uses (no mirror's name is written into outlive):
// read from real apt source files, as apt keeps them, in folders of their own.
const root = mkdtempSync(join(tmpdir(), "outlive-apt-mirror-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let n = 0;
function etc(files: Record<string, string>): string {
  const dir = join(root, String(n++));
  mkdirSync(join(dir, "sources.list.d"), { recursive: true });
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

describe("hostDebianMirror", () => {
  it("takes the first deb entry of Debian's archive from a deb822 file, past the security archive and a deb-src", () => {
    const dir = etc({
      "sources.list.d/debian.sources": [
        "Types: deb-src", "URIs: http://src.example/debian", "Suites: bookworm", "Components: main", "",
        "Types: deb", "URIs: http://security.example/debian-security", "Suites: bookworm-security", "Components: main", "",
        "Types: deb", "# a comment line", "URIs: http://mirror.example/debian/", "Suites: bookworm bookworm-updates", "Components: main", "",
      ].join("\n"),
    });
    expect(hostDebianMirror(dir)).toBe("http://mirror.example/debian");
  });

  it("skips a disabled stanza and files that are not .sources, and reads sources.list after them", () => {
    const dir = etc({
      "sources.list.d/a.sources": "Types: deb\nURIs: http://off.example/debian\nSuites: bookworm\nEnabled: no\n",
      "sources.list.d/nodesource.sources.disabled": "Types: deb\nURIs: http://disabled.example/debian\nSuites: bookworm\n",
      "sources.list.d/other.sources": "Types: deb\nURIs: https://packages.example/node\nSuites: nodistro\n",
      "sources.list": "# deb http://commented.example/debian bookworm main\ndeb [arch=amd64 signed-by=/k.gpg] https://line.example/debian bookworm main\n",
    });
    expect(hostDebianMirror(dir)).toBe("https://line.example/debian");
  });

  it("is null where apt names no Debian archive (a non-Debian host), and a build then says what to set", () => {
    const dir = etc({ "sources.list": "deb http://archive.example/ubuntu noble main\n" });
    expect(hostDebianMirror(dir)).toBeNull();
    expect(hostDebianMirror(join(root, "no-such-etc"))).toBeNull();
    expect(() => requireMirror({ mirror: "" }, "the bookworm root file system")).toThrow(/cannot build the bookworm root file system: no Debian mirror.*set the `mirror` option/);
  });

  it("is the default of the mirror option; a mirror given that is not an http(s) URL is refused by name", () => {
    expect(resolveOptions({}).mirror).toBe(hostDebianMirror() ?? "");
    expect(resolveOptions({ mirror: "http://mirror.example/debian" }).mirror).toBe("http://mirror.example/debian");
    expect(() => resolveOptions({ mirror: "ftp://mirror.example/debian" })).toThrow(/`mirror` option to be an http\(s\) URL, got `ftp:\/\/mirror.example\/debian`/);
  });
});
