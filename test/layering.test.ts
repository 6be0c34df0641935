// The folders of src/ are layers, and an import only ever points down (or stays in its layer). README's
// Development section draws the same picture.
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "./helpers/paths.js";

/** Top first. A file at src/'s root other than cli.ts belongs to no layer and fails the test. */
const LAYERS = ["cli", "transport", "gateway", "virtual", "children", "config", "shared"] as const;
type Layer = (typeof LAYERS)[number];

const SRC = join(ROOT, "src");

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

/** Every relative module a file imports or re-exports, type-only imports included, as a path under src/. */
function importsOf(file: string): string[] {
  const text = readFileSync(file, "utf8");
  const specifiers = [...text.matchAll(/\b(?:from|import)\s*\(?\s*"(\.{1,2}\/[^"]+)"/g)].map((match) => match[1]!);
  return specifiers.map((specifier) => resolve(dirname(file), specifier).replace(/\.js$/, ".ts"));
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
        .filter((target) => LAYERS.indexOf(layerOf(target)!) < LAYERS.indexOf(from))
        .map((target) => `${relative(SRC, file)} (${from}) imports ${relative(SRC, target)} (${layerOf(target)})`);
    });
    expect(upward).toEqual([]);
  });

  it("are read from the import statements this test looks for", () => {
    // A check that found no imports would pass whatever the code did.
    const router = files.find((file) => file.endsWith(join("children", "router.ts")))!;
    expect(importsOf(router).map((target) => relative(SRC, target))).toContain(join("shared", "errors.ts"));
  });
});
