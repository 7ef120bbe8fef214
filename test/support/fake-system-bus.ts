import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * A system bus of a test's own: a unix socket that speaks as much of D-Bus as one question needs
 * (`AUTH EXTERNAL`, `BEGIN`, `Hello`, and `Properties.Get` of systemd's `SystemState`, little-endian) and
 * answers `state`. What it was asked is kept, so a test can tell the bus answered and not something else.
 */
export interface FakeSystemBus {
  path: string;
  /** The members of the method calls it was sent, in order (`Hello`, `Get`). */
  asked: string[];
  close(): Promise<void>;
}

function align(n: number, to: number): number {
  return Math.ceil(n / to) * to;
}

/** A METHOD_RETURN answering `serial`, whose body is `body` of signature `sig`. */
function methodReturn(serial: number, sig: string, body: Buffer): Buffer {
  const fields: Buffer[] = [];
  let at = 16;
  const field = (code: number, type: string, value: Buffer) => {
    const padTo = align(at, 8) - at;
    const head = Buffer.concat([Buffer.alloc(padTo), Buffer.from([code, 1, type.charCodeAt(0), 0])]);
    at += head.length;
    const valPad = type === "u" || type === "s" ? align(at, 4) - at : 0;
    const out = Buffer.concat([head, Buffer.alloc(valPad), value]);
    at += valPad + value.length;
    fields.push(out);
  };
  const u32 = (n: number) => {
    const b = Buffer.alloc(4);
    b.writeUInt32LE(n);
    return b;
  };
  field(5, "u", u32(serial));
  field(8, "g", Buffer.concat([Buffer.from([sig.length]), Buffer.from(sig), Buffer.from([0])]));
  const fieldBytes = Buffer.concat(fields);
  const header = Buffer.concat([Buffer.from([0x6c, 2, 1, 1]), u32(body.length), u32(1000 + serial), u32(fieldBytes.length), fieldBytes]);
  return Buffer.concat([header, Buffer.alloc(align(header.length, 8) - header.length), body]);
}

function stringBody(s: string): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(Buffer.byteLength(s));
  return Buffer.concat([b, Buffer.from(s), Buffer.from([0])]);
}

function variantStringBody(s: string): Buffer {
  return Buffer.concat([Buffer.from([1, 0x73, 0, 0]), stringBody(s)]);
}

/** The member (field 3) of a message's header fields, and its serial. */
function parse(msg: Buffer): { serial: number; member: string } {
  const serial = msg.readUInt32LE(8);
  const fieldsLen = msg.readUInt32LE(12);
  let at = 16;
  let member = "";
  while (at < 16 + fieldsLen) {
    at = align(at, 8);
    const code = msg[at];
    const sigLen = msg[at + 1];
    const sig = msg.subarray(at + 2, at + 2 + sigLen).toString();
    at += 2 + sigLen + 1;
    if (sig === "s" || sig === "o") {
      at = align(at, 4);
      const len = msg.readUInt32LE(at);
      const value = msg.subarray(at + 4, at + 4 + len).toString();
      if (code === 3) member = value;
      at += 4 + len + 1;
    } else if (sig === "g") {
      at += 1 + msg[at] + 1;
    } else if (sig === "u") {
      at = align(at, 4) + 4;
    } else break;
  }
  return { serial, member };
}

/** `answerAfterMs`: how long its manager takes to answer `Get` (a machine busy at its shutdown); null, never. */
export async function fakeSystemBus(state: string, answerAfterMs: number | null = 0): Promise<FakeSystemBus> {
  const dir = mkdtempSync(join(tmpdir(), "outlive-bus-"));
  const path = join(dir, "system_bus_socket");
  const asked: string[] = [];
  const sockets = new Set<Socket>();
  const timers: NodeJS.Timeout[] = [];
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => {});
    let buf = Buffer.alloc(0);
    let began = false;
    socket.on("data", (chunk) => {
      buf = Buffer.concat([buf, chunk]);
      for (;;) {
        if (!began) {
          const end = buf.indexOf("\r\n");
          if (end === -1) return;
          const line = buf.subarray(0, end).toString().replace(/^\0/, "");
          buf = buf.subarray(end + 2);
          if (line.startsWith("AUTH EXTERNAL")) socket.write("OK 0123456789abcdef0123456789abcdef\r\n");
          else if (line === "BEGIN") began = true;
          continue;
        }
        if (buf.length < 16) return;
        const total = align(16 + buf.readUInt32LE(12), 8) + buf.readUInt32LE(4);
        if (buf.length < total) return;
        const msg = buf.subarray(0, total);
        buf = buf.subarray(total);
        const { serial, member } = parse(msg);
        asked.push(member);
        if (member === "Hello") socket.write(methodReturn(serial, "s", stringBody(":1.99")));
        else if (member === "Get" && answerAfterMs !== null) {
          const answer = methodReturn(serial, "v", variantStringBody(state));
          if (answerAfterMs === 0) socket.write(answer);
          else timers.push(setTimeout(() => socket.destroyed || socket.write(answer), answerAfterMs));
        }
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(path, resolve));
  return {
    path,
    asked,
    async close() {
      for (const t of timers) clearTimeout(t);
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
