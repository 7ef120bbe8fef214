import { OutliveError } from "../errors.ts";

/**
 * Turns the text given to `outlive send` into bytes: `\n` newline, `\r`
 * return (Enter), `\t` tab, `\e` escape, `\\` a backslash, `\xHH` any byte,
 * and `\cX` the control key X (`\cc` is Ctrl-C, `\cd` Ctrl-D, `\c[` Esc).
 * Any other backslash is a mistake and is named, so nothing half-meant is typed.
 *
 * @example
 * ```ts
 * import { unescapeKeys } from "./escapes.ts";
 * console.log(unescapeKeys("ls\\n")); // Uint8Array [108, 115, 10]
 * console.log(unescapeKeys("\\cc")); // Uint8Array [3]
 * ```
 */
export function unescapeKeys(text: string): Uint8Array {
  const out: number[] = [];
  const enc = new TextEncoder();
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (ch !== "\\") {
      const cp = text.codePointAt(i)!;
      const s = String.fromCodePoint(cp);
      out.push(...enc.encode(s));
      i += s.length - 1;
      continue;
    }
    const next = text[i + 1];
    const simple: Record<string, number> = { n: 10, r: 13, t: 9, e: 27, "\\": 92 };
    if (next !== undefined && next in simple) {
      out.push(simple[next]);
      i++;
    } else if (next === "x" && /^[0-9a-fA-F]{2}$/.test(text.slice(i + 2, i + 4))) {
      out.push(parseInt(text.slice(i + 2, i + 4), 16));
      i += 3;
    } else if (next === "c" && i + 2 < text.length && /^[@-_a-z?]$/.test(text[i + 2])) {
      const k = text[i + 2];
      out.push(k === "?" ? 127 : k.toUpperCase().charCodeAt(0) & 0x1f);
      i += 2;
    } else {
      throw new OutliveError(
        "E_BAD_OPTION",
        `Expected the text to use only the escapes \\n \\r \\t \\e \\\\ \\xHH \\cX, got ${JSON.stringify(text.slice(i, i + 4))} at character ${i + 1}`,
      );
    }
  }
  return Uint8Array.from(out);
}
