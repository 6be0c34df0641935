// The folders of src/ are layers, and an import only ever points down (or stays in its layer).
// docs/development.md draws the same picture.
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { ROOT } from "./helpers/paths.js";

/** Top first. A file at src/'s root other than cli.ts belongs to no layer and fails the test. */
const LAYERS = ["cli", "transport", "gateway", "virtual", "children", "config", "shared"] as const;
type Layer = (typeof LAYERS)[number];

const SRC = join(ROOT, "src");
const NOT_A_LITERAL = join(ROOT, "an import() of an expression");

function layerOf(file: string): Layer | undefined {
  const [first, ...rest] = relative(SRC, file).split(sep);
  if (rest.length === 0) return first === "cli.ts" ? "cli" : undefined;
  return LAYERS.find((layer) => layer === first);
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    return entry.isDirectory() ? sourceFiles(path) : entry.name.endsWith(".ts") ? [path] : [];
  });
}

/**
 * Every relative module a file imports or re-exports, type-only imports and `import()` included, as a path
 * under src/; read from TypeScript's own syntax tree, so no form of import is missed. An `import()` of
 * anything but a string literal is reported as a path outside src/, which no layer holds.
 */
function importsOf(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true);
  const specifiers: string[] = [];
  const visit = (node: ts.Node): void => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      specifiers.push(node.moduleSpecifier.text);
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const [argument] = node.arguments;
      specifiers.push(argument && ts.isStringLiteralLike(argument) ? argument.text : NOT_A_LITERAL);
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
      specifiers.push(node.argument.literal.text);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return specifiers
    .filter((specifier) => specifier.startsWith(".") || specifier === NOT_A_LITERAL)
    .map((specifier) => (specifier === NOT_A_LITERAL ? specifier : resolve(dirname(file), specifier).replace(/\.js$/, ".ts")));
}

describe("layers", () => {
  const files = sourceFiles(SRC);

  it("place every source file in a layer", () => {
    expect(files.filter((file) => layerOf(file) === undefined).map((file) => relative(ROOT, file))).toEqual([]);
  });

  it("import only from their own layer or the layers below", () => {
    const upward = files.flatMap((file) => {
      const from = layerOf(file)!;
      return importsOf(file)
        .filter((target) => layerOf(target) === undefined || LAYERS.indexOf(layerOf(target)!) < LAYERS.indexOf(from))
        .map((target) => `${relative(SRC, file)} (${from}) imports ${relative(SRC, target)} (${layerOf(target)})`);
    });
    expect(upward).toEqual([]);
  });

  it("are read from every form of import", () => {
    // A check that found no imports would pass whatever the code did.
    const router = files.find((file) => file.endsWith(join("children", "router.ts")))!;
    expect(importsOf(router).map((target) => relative(SRC, target))).toContain(join("shared", "errors.ts"));
    const all = files.flatMap(importsOf).map((target) => relative(SRC, target));
    expect(all.length).toBeGreaterThan(300);
  });
});

/** Packages whose load costs a start of gaggle time that most starts never use: loaded by import() where first needed. */
const LOADED_WHEN_USED = { "@agentclientprotocol/sdk": join("virtual", "agents", "acp-sdk.ts") };

/** Each import of `pkg` in `file` that loads it with the file (a static import or re-export that is not type-only). */
function staticLoadsOf(file: string, pkg: string): number {
  const source = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true);
  let loads = 0;
  const visit = (node: ts.Node): void => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      const typeOnly = ts.isImportDeclaration(node) ? node.importClause?.isTypeOnly === true : node.isTypeOnly;
      if (node.moduleSpecifier.text === pkg && !typeOnly) loads++;
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return loads;
}

describe("packages most starts do not use", () => {
  const files = sourceFiles(SRC);

  it("are loaded only by import() in the one module that loads them, never with the modules that name their types", () => {
    for (const [pkg, loader] of Object.entries(LOADED_WHEN_USED)) {
      const loading = files.filter((file) => staticLoadsOf(file, pkg) > 0).map((file) => relative(SRC, file));
      expect(loading, pkg).toEqual([]);
      const text = readFileSync(join(SRC, loader), "utf8");
      expect(text, loader).toContain(`import("${pkg}")`);
    }
  });
});
