/**
 * Node module hooks that let a user's `.ts` scenario run with no build step
 * on Node 20, which cannot strip types itself. TypeScript's own
 * `transpileModule` (one file at a time, no type check, no config needed)
 * turns each `.ts`/`.mts` file into ESM as it loads. Registered by
 * `register.ts`; Deno runs TypeScript natively and never loads this.
 */
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import ts from "typescript";

const TS_FILE = /\.(ts|mts|cts)$/;

interface ResolveContext {
  parentURL?: string;
}
type NextResolve = (specifier: string, context: ResolveContext) => Promise<{ url: string; format?: string | null }>;
type NextLoad = (url: string, context: unknown) => Promise<{ format?: string | null; source?: unknown; shortCircuit?: boolean }>;

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
  if (!url.startsWith("file:") || !TS_FILE.test(url)) return next(url, context);
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
