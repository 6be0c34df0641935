// The one-file build, from tsc's output in dist/: dist/gaggle.cjs is gaggle's program with every dependency in
// it but the shell grammar's, and dist/cli.js, the executable, runs it from V8's code cache (src/cli.ts, src/cli/code-cache.ts).
// CommonJS, because V8's code cache is offered for scripts; what the program imports with import() is still
// evaluated only when first imported (HTTP serving, remote children, OAuth, doctor).
import { createHash } from "node:crypto";
import { readFileSync, rmSync } from "node:fs";
import { builtinModules } from "node:module";
import { build } from "esbuild";

/**
 * A dependency that loads a Node built-in with import() (the OTLP exporter loads http and https so) gets require()
 * instead: the program runs where import() has no loader (see below), and a built-in is there to require.
 */
const builtIns = new Set(builtinModules.flatMap((name) => [name, `node:${name}`]));
const builtInImport = /\bimport\((["'])([^"']+)\1\)/g;
const requireBuiltIns = {
  name: "require-built-ins",
  setup(bundle) {
    bundle.onLoad({ filter: /[\\/]node_modules[\\/].*\.js$/ }, (args) => {
      const text = readFileSync(args.path, "utf8");
      if (!text.includes("import(")) return undefined;
      const contents = text.replace(builtInImport, (call, _quote, name) =>
        builtIns.has(name) ? `Promise.resolve().then(() => require("${name}"))` : call,
      );
      return contents === text ? undefined : { contents, loader: "js" };
    });
  },
};

/**
 * zod's `locales` module is its error messages in fifty languages; gaggle's messages are English, the locale zod
 * configures itself. The bundle's `locales` holds `en` alone, leaving out 300 KB of text V8 would hold as long as
 * gaggle runs.
 */
const englishOnly = {
  name: "zod-english-only",
  setup(bundle) {
    bundle.onLoad({ filter: /[\\/]node_modules[\\/]zod[\\/]v4[\\/]locales[\\/]index\.js$/ }, () => ({
      contents: 'export { default as en } from "./en.js";\n',
      loader: "js",
    }));
  },
};

const common = {
  bundle: true,
  platform: "node",
  target: "node20",
  logLevel: "warning",
  minifyWhitespace: true,
  minifySyntax: true,
  // A package's ES module build where it has one: esbuild leaves out what nothing imports, which it cannot do in
  // CommonJS (OpenTelemetry's CommonJS builds bring every semantic convention, 170 KB of text, for the few the
  // tracing uses).
  mainFields: ["module", "main"],
};

await build({
  ...common,
  entryPoints: ["dist/cli/main.js"],
  outfile: "dist/gaggle.cjs",
  format: "cjs",
  sourcemap: true,
  // version.ts finds gaggle's package.json from its own URL.
  define: { "import.meta.url": "gaggleModuleUrl" },
  // The shell grammar is WebAssembly its packages load from their own folders: loaded from node_modules when used.
  // DuckDB is a native engine, an optional dependency loaded only by the duckdb child.
  external: ["web-tree-sitter", "tree-sitter-bash", "@duckdb/node-api"],
  banner: { js: 'var gaggleModuleUrl = require("node:url").pathToFileURL(__filename).href;' },
  plugins: [requireBuiltIns, englishOnly],
});

// The program runs as a vm.Script (V8's code cache), where import() has no loader: what it loads at run time
// (the externals) it requires. An import() left in the bundle would fail only when reached, so the build fails now.
const bundle = readFileSync("dist/gaggle.cjs");
const stray = [...bundle.toString("utf8").matchAll(/\bimport\("([^"]+)"\)/g)].map((match) => match[1]);
// pkce-challenge reaches for node:crypto only where globalThis.crypto is missing, as it is on no Node gaggle runs on.
const unreachable = new Set(["node:crypto"]);
const reached = stray.filter((specifier) => !unreachable.has(specifier));
if (reached.length > 0) throw new Error(`dist/gaggle.cjs imports ${reached.join(", ")} with import(): require them instead`);

// The program's text is held by V8 as long as gaggle runs: all ASCII, one byte a character; a single character
// beyond (an en dash in a string) would make V8 hold all of it two bytes a character.
const wide = bundle.findIndex((byte) => byte > 0x7f);
if (wide >= 0) {
  const line = bundle.subarray(0, wide).toString("latin1").split("\n").length;
  throw new Error(`dist/gaggle.cjs:${line} holds a character beyond ASCII: write it as an escape (\\u2013) in the source`);
}

const hash = createHash("sha256").update(bundle).digest("hex").slice(0, 16);
await build({
  ...common,
  entryPoints: ["dist/cli.js"],
  outfile: "dist/cli.js",
  allowOverwrite: true,
  format: "esm",
  define: { GAGGLE_BUNDLE_HASH: JSON.stringify(hash) },
  // Only the unbuilt program imports it; left as it is, so the bundle never holds it twice.
  external: ["./cli/main.js"],
});
rmSync("dist/cli.js.map", { force: true });
