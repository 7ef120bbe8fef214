import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { ContainerError } from "../errors.ts";

/**
 * The Debian mirror this host's own apt uses, for debootstrap and the guest
 * image's kernel: the first `deb` entry whose URI's path ends in `/debian`
 * (not a security or other archive), from `ETC/sources.list.d/*.sources`
 * (deb822, read in name order) and then `ETC/sources.list` (one line an
 * entry). A machine that can install Debian's packages can then build the
 * containers from the same place, and no mirror's name is written into
 * outlive. Null when there is none (a non-Debian host): then the `mirror`
 * option must name one.
 *
 * @example
 * ```ts
 * import { mkdtempSync, mkdirSync, writeFileSync } from "node:fs";
 * import { tmpdir } from "node:os";
 * import { join } from "node:path";
 * import { hostDebianMirror } from "./apt-mirror.ts";
 * const etc = mkdtempSync(join(tmpdir(), "apt-"));
 * mkdirSync(join(etc, "sources.list.d"));
 * writeFileSync(join(etc, "sources.list"), "deb http://mirror.example/debian bookworm main\n");
 * console.log(hostDebianMirror(etc)); // "http://mirror.example/debian"
 * ```
 */
export function hostDebianMirror(etc = "/etc/apt"): string | null {
  const dir = join(etc, "sources.list.d");
  const deb822 = existsSync(dir) ? readdirSync(dir).filter((n) => n.endsWith(".sources")).sort() : [];
  for (const name of deb822) {
    const found = fromDeb822(readText(join(dir, name)));
    if (found) return found;
  }
  return fromOneLine(readText(join(etc, "sources.list")));
}

function readText(path: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return "";
  }
}

/** A URI of Debian's main archive: http(s), its path ending in /debian. */
function debianArchive(uri: string): string | null {
  const trimmed = uri.replace(/\/+$/, "");
  return /^https?:\/\/[^\s]+\/debian$/.test(trimmed) ? trimmed : null;
}

function fromDeb822(text: string): string | null {
  for (const stanza of text.split(/\n\s*\n/)) {
    const fields = new Map<string, string>();
    for (const line of stanza.split("\n")) {
      const m = /^([A-Za-z-]+):\s*(.*)$/.exec(line);
      if (m) fields.set(m[1].toLowerCase(), m[2]);
    }
    if (!(fields.get("types") ?? "").split(/\s+/).includes("deb")) continue;
    if ((fields.get("enabled") ?? "yes").toLowerCase() === "no") continue;
    for (const uri of (fields.get("uris") ?? "").split(/\s+/)) {
      const found = debianArchive(uri);
      if (found) return found;
    }
  }
  return null;
}

function fromOneLine(text: string): string | null {
  for (const raw of text.split("\n")) {
    // deb [options] URI suite components…
    const line = raw.replace(/#.*/, "").replace(/\[[^\]]*\]/, " ").trim().split(/\s+/);
    if (line[0] !== "deb" || !line[1]) continue;
    const found = debianArchive(line[1]);
    if (found) return found;
  }
  return null;
}

/** The mirror a build takes its packages from; a ContainerError naming where it was looked for when there is none. */
export function requireMirror(options: { mirror: string }, what: string): string {
  if (options.mirror) return options.mirror;
  throw new ContainerError(
    "build-failed",
    `cannot build ${what}: no Debian mirror; this host's apt names none (no \`deb\` entry ending in /debian in /etc/apt/sources.list.d/*.sources or /etc/apt/sources.list): set the \`mirror\` option`,
  );
}
