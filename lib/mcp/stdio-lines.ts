import { PassThrough, type Readable, type Writable } from "node:stream";
import { LineSplitter } from "../rpc/lines.ts";

/**
 * The agent's stdin as the SDK's stdio transport reads it, with the lines
 * it must not see taken out and answered here: a line that is not JSON
 * gets a -32700 error and one longer than `maxBytes` a -32600 (both with id
 * null, as JSON-RPC says), and the server reads on. Left to itself the
 * SDK drops a line that is not JSON without a word, and ends the whole
 * session once its buffer passes 10 MiB. Each answer is one write of a
 * whole line, so it never splits a line the SDK writes.
 *
 * @example
 * ```ts
 * import { PassThrough } from "node:stream";
 * import { guardedLines } from "./stdio-lines.ts";
 * const input = new PassThrough(), output = new PassThrough();
 * const lines = guardedLines(input, output, 1024);
 * input.end('not json\n{"jsonrpc":"2.0","id":1,"method":"ping"}\n');
 * for await (const chunk of lines) console.log(String(chunk)); // {"jsonrpc":"2.0","id":1,"method":"ping"}
 * console.log(JSON.parse(String(output.read())).error.code); // -32700
 * ```
 */
export function guardedLines(input: Readable, output: Writable, maxBytes: number): Readable {
  const split = new LineSplitter(maxBytes);
  const lines = new PassThrough();
  const refuse = (code: number, message: string) => output.write(`${JSON.stringify({ jsonrpc: "2.0", id: null, error: { code, message } })}\n`);
  input.on("data", (chunk: Uint8Array) => {
    for (const event of split.push(chunk)) {
      if ("overlong" in event) {
        refuse(-32600, `a request line of ${event.overlong} bytes is longer than the ${maxBytes} this server takes (--max-line-bytes); it was skipped`);
      } else if (isJson(event.line)) {
        lines.write(`${event.line}\n`);
      } else {
        refuse(-32700, `a request line is not JSON: ${JSON.stringify(event.line.slice(0, 80))}`);
      }
    }
  });
  input.once("end", () => lines.end());
  input.once("error", (error) => lines.destroy(error));
  return lines;
}

function isJson(line: string): boolean {
  try {
    JSON.parse(line);
    return true;
  } catch {
    return false;
  }
}
