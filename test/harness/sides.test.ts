import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { afterAll, describe, expect, it } from "vitest";

// The harness has two sides: harness/host/ (and the entry run-scenarios.ts) runs on the host and
// boots containers; everything the driver loads inside the container (harness/inside/, harness/shared/,
// the cases, the public face mod.ts, and users' scenario files through it) must never load host code.
// This walks the import graph from those files, type-only imports included (a type from the host side
// is the host side's shape leaking in), and fails naming the chain that reaches a host file.
const ROOT = fileURLToPath(new URL("../../", import.meta.url));

interface Graph {
  /** file → files it imports statically (loaded with it). */
  imports: Map<string, string[]>;
  /** file → files it imports with import(): loaded only when that line runs. */
  dynamic: Map<string, string[]>;
}

function tsFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (name === "node_modules" || name === "reports") return [];
    return statSync(path).isDirectory() ? tsFiles(path) : /\.(ts|mts)$/.test(name) ? [path] : [];
  });
}

/** Where a specifier leads, inside `root`; null for built-ins and other packages. */
function resolveSpecifier(root: string, from: string, spec: string): string | null {
  const bare: Record<string, string> = { "outlive/harness": "harness/mod.ts", outlive: "lib/mod.ts" };
  if (bare[spec]) return join(root, bare[spec]);
  if (!spec.startsWith(".")) return null;
  const path = resolve(dirname(from), spec);
  for (const candidate of [path, path.replace(/\.js$/, ".ts"), `${path}.ts`]) {
    if (existsSync(candidate) && statSync(candidate).isFile()) return candidate;
  }
  throw new Error(`${relative(root, from)}: cannot resolve ${JSON.stringify(spec)}`);
}

function specifiersOf(file: string): { static: string[]; dynamic: string[] } {
  const source = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.ES2022, true);
  const found = { static: [] as string[], dynamic: [] as string[] };
  const visit = (node: ts.Node): void => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      found.static.push(node.moduleSpecifier.text);
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
      found.static.push(node.argument.literal.text);
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const [arg] = node.arguments;
      // A computed specifier (registry.ts's cases by name) cannot be followed; the cases are roots themselves.
      if (arg && ts.isStringLiteralLike(arg)) found.dynamic.push(arg.text);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

function walk(root: string, roots: string[]): Graph {
  const graph: Graph = { imports: new Map(), dynamic: new Map() };
  const queue = [...roots];
  while (queue.length > 0) {
    const file = queue.pop()!;
    if (graph.imports.has(file)) continue;
    const specs = specifiersOf(file);
    const imports = specs.static.map((s) => resolveSpecifier(root, file, s)).filter((f): f is string => f !== null);
    graph.imports.set(file, imports);
    graph.dynamic.set(file, specs.dynamic.map((s) => resolveSpecifier(root, file, s)).filter((f): f is string => f !== null));
    queue.push(...imports);
  }
  return graph;
}

/** For every import of a host file, the shortest chain from a root to it, as `a → b → host/c`. */
function hostChains(root: string, graph: Graph, roots: string[], isHost: (file: string) => boolean): string[] {
  const via = new Map<string, string | null>(roots.map((r) => [r, null]));
  const queue = [...roots];
  const chains: string[] = [];
  while (queue.length > 0) {
    const file = queue.shift()!;
    for (const next of graph.imports.get(file) ?? []) {
      if (isHost(next)) {
        const path = [file];
        for (let at = via.get(file); at; at = via.get(at) ?? null) path.unshift(at);
        chains.push([...path, next].map((f) => relative(root, f)).join(" → "));
      } else if (!via.has(next)) {
        via.set(next, file);
        queue.push(next);
      }
    }
  }
  return chains;
}

function sides(root: string) {
  const harness = join(root, "harness");
  const isHost = (file: string) => file.startsWith(join(harness, "host") + sep) || file === join(harness, "run-scenarios.ts");
  const inside = [
    ...["inside", "shared", "cases"].flatMap((d) => (existsSync(join(harness, d)) ? tsFiles(join(harness, d)) : [])),
    ...[join(harness, "mod.ts")].filter(existsSync),
    ...(existsSync(join(harness, "examples")) ? tsFiles(join(harness, "examples")) : []),
  ];
  const graph = walk(root, inside);
  const dynamicToHost = [...graph.dynamic].flatMap(([from, targets]) =>
    targets.filter(isHost).map((to) => `${relative(root, from)} → import(${relative(root, to)})`));
  return { inside, graph, chains: hostChains(root, graph, inside, isHost), dynamicToHost };
}

describe("the harness's two sides", () => {
  const { inside, graph, chains, dynamicToHost } = sides(ROOT);

  it("nothing the driver loads inside the container imports the host side", () => {
    // The walk really covered the inside: the driver, a case, the public face, and the library below them.
    const walked = [...graph.imports.keys()].map((f) => relative(ROOT, f));
    expect(walked).toEqual(expect.arrayContaining([
      "harness/inside/driver.ts", "harness/cases/restart-adopt.ts", "harness/mod.ts", "harness/shared/registry.ts", "lib/mod.ts",
    ]));
    expect(inside.length).toBeGreaterThan(40);
    expect(chains).toEqual([]);
  });

  it("the one way in is a case run on its own: runIfMain imports the host CLI only then", () => {
    expect(dynamicToHost).toEqual(["harness/inside/run-if-main.ts → import(harness/host/cli.ts)"]);
  });

  describe("the check itself", () => {
    const scratch = mkdtempSync(join(tmpdir(), "outlive-sides-"));
    afterAll(() => rmSync(scratch, { recursive: true, force: true }));

    it("names the chain when an inside file reaches the host side, a type import included", () => {
      const write = (path: string, text: string) => {
        mkdirSync(dirname(join(scratch, path)), { recursive: true });
        writeFileSync(join(scratch, path), text);
      };
      write("harness/inside/driver.ts", 'import { define } from "../shared/define.ts";\nimport { mark } from "../../lib/mark.ts";\nexport const d = [define, mark];\n');
      write("lib/mark.ts", 'import { Engine } from "../harness/host/engines.ts";\nexport const mark = Engine;\n');
      write("harness/shared/define.ts", 'import type { Engine } from "../host/engines.ts";\nexport const define = (e: Engine) => e;\n');
      write("harness/host/engines.ts", "export interface Engine { name: string }\nexport const Engine = 1;\n");
      expect(sides(scratch).chains.sort()).toEqual([
        "harness/inside/driver.ts → lib/mark.ts → harness/host/engines.ts",
        "harness/shared/define.ts → harness/host/engines.ts",
      ].sort());
    });
  });
});
