import { readFileSync } from "node:fs";

/** A socket bound to a port and waiting: a TCP listener, or a UDP socket bound and not connected. */
export interface ListeningPort {
  proto: "tcp" | "udp";
  /** The local address as `ss` prints it: `127.0.0.1`, `0.0.0.0`, `::1`, `::`. */
  address: string;
  port: number;
}

/** TCP_LISTEN in /proc/net/tcp's `st` column; an unconnected UDP socket shows TCP_CLOSE (07). */
const TCP_LISTEN = "0A";
const UDP_UNCONNECTED = "07";

/**
 * The listening sockets of one `/proc/net/{tcp,tcp6,udp,udp6}` table, by
 * socket inode. Pure: the table's text in, the sockets out.
 *
 * @example
 * ```ts
 * import { parseNetTable } from "./proc-net.ts";
 * const text = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n" +
 *   "   0: 0100007F:1435 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 4242 1 0 100 0 0 10 0\n";
 * console.log(parseNetTable(text, "tcp").get(4242)); // { proto: "tcp", address: "127.0.0.1", port: 5173 }
 * ```
 */
export function parseNetTable(text: string, proto: "tcp" | "udp"): Map<number, ListeningPort> {
  const out = new Map<number, ListeningPort>();
  const wanted = proto === "tcp" ? TCP_LISTEN : UDP_UNCONNECTED;
  const lines = text.split("\n");
  for (let i = 1; i < lines.length; i++) {
    const f = lines[i].trim().split(/\s+/);
    if (f.length < 10 || f[3] !== wanted) continue;
    const [hexAddress, hexPort] = f[1].split(":");
    const port = parseInt(hexPort, 16);
    const inode = Number(f[9]);
    if (!port || !inode || hexAddress === undefined) continue;
    out.set(inode, { proto, address: addressOf(hexAddress), port });
  }
  return out;
}

/** /proc/net's address: 8 hex digits (IPv4) or 32 (IPv6), each 32-bit word in host (little-endian) order. */
function addressOf(hex: string): string {
  const words: number[][] = [];
  for (let i = 0; i < hex.length; i += 8) {
    const w = hex.slice(i, i + 8);
    words.push([w.slice(6, 8), w.slice(4, 6), w.slice(2, 4), w.slice(0, 2)].map((b) => parseInt(b, 16)));
  }
  const bytes = words.flat();
  if (bytes.length === 4) return bytes.join(".");
  // An IPv4-mapped address (::ffff:a.b.c.d) is said as IPv4's.
  if (bytes.slice(0, 10).every((b) => b === 0) && bytes[10] === 255 && bytes[11] === 255) return bytes.slice(12).join(".");
  const groups: string[] = [];
  for (let i = 0; i < 16; i += 2) groups.push(((bytes[i] << 8) | bytes[i + 1]).toString(16));
  return compressIpv6(groups);
}

/** The longest run of zero groups (two or more) as `::`, as RFC 5952 writes an address. */
function compressIpv6(groups: string[]): string {
  let best = -1;
  let bestLen = 0;
  for (let i = 0; i < groups.length;) {
    if (groups[i] !== "0") {
      i++;
      continue;
    }
    let j = i;
    while (j < groups.length && groups[j] === "0") j++;
    if (j - i > bestLen && j - i >= 2) [best, bestLen] = [i, j - i];
    i = j;
  }
  if (best === -1) return groups.join(":");
  return `${groups.slice(0, best).join(":")}::${groups.slice(best + bestLen).join(":")}`;
}

/**
 * Every listening TCP and bound UDP socket of the network namespace `pid`
 * is in, by socket inode: its `/proc/PID/net/{tcp,tcp6,udp,udp6}`. A table
 * that cannot be read (no IPv6) adds nothing.
 */
export function readListeningSockets(pid: number | "self", procRoot = "/proc"): Map<number, ListeningPort> {
  const all = new Map<number, ListeningPort>();
  for (const [file, proto] of [["tcp", "tcp"], ["tcp6", "tcp"], ["udp", "udp"], ["udp6", "udp"]] as const) {
    let text: string;
    try {
      text = readFileSync(`${procRoot}/${pid}/net/${file}`, "latin1");
    } catch {
      continue;
    }
    for (const [inode, port] of parseNetTable(text, proto)) all.set(inode, port);
  }
  return all;
}
