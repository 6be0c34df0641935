// The checks `npm test` runs before the tests: type-check, lint and formatting, at once (each mostly waits on one
// core, and they read the tree without writing it). Each one's output is printed whole once it ends; the exit code
// is the first failure's, naming which failed.
import { spawn } from "node:child_process";

const CHECKS = [
  ["typecheck", "npm", ["run", "--silent", "typecheck"]],
  ["lint", "npm", ["run", "--silent", "lint"]],
  ["format:check", "npm", ["run", "--silent", "format:check"]],
];

function run([name, command, args]) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (chunk) => (output += chunk));
    child.stderr.on("data", (chunk) => (output += chunk));
    child.on("error", (error) => resolve({ name, code: 1, output: `${output}${error.message}\n` }));
    child.on("close", (code, signal) => resolve({ name, code: code ?? (signal ? 1 : 0), output }));
  });
}

const results = await Promise.all(CHECKS.map(run));
for (const { name, code, output } of results) process.stdout.write(`> ${name}: ${code === 0 ? "ok" : `failed (exit ${code})`}\n${output}`);
const failed = results.filter((result) => result.code !== 0);
if (failed.length > 0) {
  process.stderr.write(`checks failed: ${failed.map((result) => result.name).join(", ")}\n`);
  process.exit(failed[0].code);
}
