// Lint rules `npm test` enforces: ESLint's and typescript-eslint's recommended sets, plus the habits this
// codebase keeps (stdout is the protocol channel, type-only imports are marked, no promise is left floating).
import js from "@eslint/js";
import globals from "globals";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["dist/", "coverage/", "node_modules/"] },
  js.configs.recommended,
  {
    rules: {
      // A `let` assigned once, after a closure that reads it was made (a value only known later), stays a `let`.
      "prefer-const": ["error", { ignoreReadBeforeAssign: true }],
    },
  },
  {
    files: ["**/*.mjs", "**/*.js"],
    languageOptions: { globals: globals.node },
    rules: { "no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_", caughtErrors: "none" }] },
  },
  {
    files: ["**/*.ts"],
    extends: [tseslint.configs.recommended],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      "@typescript-eslint/consistent-type-imports": ["error", { fixStyle: "inline-type-imports" }],
      "@typescript-eslint/no-floating-promises": "error",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_", caughtErrors: "none" }],
    },
  },
  {
    // stdout carries the protocol: gaggle writes to it only through its transports, and logs with pino to stderr.
    // Every call crosses several awaits: an AsyncLocalStorage, once entered, turns on Node's promise hooks for the
    // rest of the process and about doubles what each await costs, so state travels in fields and arguments.
    files: ["src/**/*.ts"],
    rules: {
      "no-console": "error",
      "no-restricted-imports": [
        "error",
        ...["node:async_hooks", "async_hooks"].map((name) => ({
          name,
          message: "async hooks (AsyncLocalStorage, createHook) slow every await in gaggle: hand the state down in a field or an argument",
        })),
      ],
    },
  },
  {
    // One request never stops the others: where gaggle serves, the file system is asked asynchronously, so a file on
    // a slow or hung mount holds only the call that reached it. A synchronous call is kept where nothing else waits
    // yet (start-up, a reload's one step, exit), or where no disk is asked (/proc), each with its reason in the
    // directive that lets it pass. CLI commands are processes of their own, with no one else to keep waiting.
    files: ["src/**/*.ts"],
    ignores: ["src/cli/**", "src/config/client-configs.ts"],
    rules: {
      "no-restricted-syntax": [
        "error",
        ...["CallExpression[callee.name=/Sync$/]", "CallExpression[callee.property.name=/Sync$/]"].map((selector) => ({
          selector,
          message:
            "a synchronous call blocks every request while it waits: use node:fs/promises (src/shared/fs-probes.ts), or say why it may block in an eslint-disable-next-line directive's description",
        })),
      ],
    },
  },
);
