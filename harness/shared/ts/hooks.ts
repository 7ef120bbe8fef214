/**
 * Node module hooks that let a user's `.ts` scenario run with no build step.
 * A Node that strips types itself (`process.features.typescript`: Node >=
 * 23.6, or 22.6+ with `--experimental-strip-types`) loads `.ts` files as
 * they are; on an older Node, TypeScript's own `transpileModule` (one file at
 * a time, no type check, no config needed) turns each `.ts`/`.mts` file into
 * ESM as it loads. The compiler is an optional peer dependency, imported
 * only then; `register.ts` checks it is there before registering these.
 * Deno runs TypeScript natively and never loads this.
 */
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import type * as TypeScript from "typescript";
import { nodeStripsTypes } from "./strip-types.ts";

const TS_FILE = /\.(ts|mts|cts)$/;

interface ResolveContext {
  parentURL?: string;
}
type NextResolve = (specifier: string, context: ResolveContext) => Promise<{ url: string; format?: string | null }>;
type NextLoad = (url: string, context: unknown) => Promise<{ format?: string | null; source?: unknown; shortCircuit?: boolean }>;

let compiler: Promise<typeof TypeScript> | null = null;

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
  compiler ??= import("typescript").then((m) => (m.default ?? m) as typeof TypeScript);
  const ts = await compiler;
  const file = fileURLToPath(url);
  const source = await readFile(file, "utf8");
  const out = ts.transpileModule(source, {
    fileName: file,
    compilerOptions: {
      module: ts.ModuleKind.ESNext,
      target: ts.ScriptTarget.ES2022,
      // Imports of `./x.ts` stay as written: these hooks load them too.
      allowImportingTsExtensions: true,
      inlineSourceMap: true,
    },
    reportDiagnostics: false,
  });
  return { format: "module", source: out.outputText, shortCircuit: true };
}
