/**
 * Node module hooks that let a user's `.ts` scenario run with no build step.
 * A Node that strips types itself (`process.features.typescript`: Node >=
 * 23.6, or 22.6+ with `--experimental-strip-types`) loads `.ts` files as
 * they are; on an older Node, esbuild's `transform` (one file at a time, no
 * type check, no config) turns each `.ts`/`.mts` file into ESM as it loads.
 *
 * Why esbuild and not the TypeScript compiler: stripping types is all this
 * needs, and esbuild's `transform` is a small, stable API that outlive
 * already builds with, so it is a dependency of outlive's own at a pinned
 * range. The compiler's JavaScript API is not stable across its releases
 * (TypeScript 7's npm package has none), and a peer dependency left to the
 * user's `typescript@latest` broke every `.ts` scenario when it moved.
 * Deno runs TypeScript natively and never loads this.
 */
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { nodeStripsTypes } from "./strip-types.ts";

const TS_FILE = /\.(ts|mts|cts)$/;

interface ResolveContext {
  parentURL?: string;
}
type NextResolve = (specifier: string, context: ResolveContext) => Promise<{ url: string; format?: string | null }>;
type NextLoad = (url: string, context: unknown) => Promise<{ format?: string | null; source?: unknown; shortCircuit?: boolean }>;
type Transform = (source: string, options: Record<string, unknown>) => Promise<{ code: string }>;

let transformer: Promise<Transform> | null = null;

/** `./steps` written TypeScript-style (no extension) from a `.ts` file also finds `./steps.ts`. */
export async function resolve(specifier: string, context: ResolveContext, next: NextResolve) {
  try {
    return await next(specifier, context);
  } catch (error) {
    const fromTs = context.parentURL !== undefined && TS_FILE.test(context.parentURL);
    if (!fromTs || !/^\.{1,2}\//.test(specifier) || /\.[a-z]+$/i.test(specifier)) throw error;
    return next(`${specifier}.ts`, context);
  }
}

export async function load(url: string, context: unknown, next: NextLoad) {
  if (!url.startsWith("file:") || !TS_FILE.test(url) || nodeStripsTypes()) return next(url, context);
  transformer ??= import("esbuild").then((m) => ((m as { transform?: Transform }).transform ?? (m as { default: { transform: Transform } }).default.transform));
  const transform = await transformer;
  const file = fileURLToPath(url);
  const source = await readFile(file, "utf8");
  const out = await transform(source, {
    loader: "ts",
    format: "esm",
    target: "es2022",
    sourcefile: file,
    sourcemap: "inline",
    // Imports of `./x.ts` stay as written: these hooks load them too.
  });
  return { format: "module", source: out.code, shortCircuit: true };
}
