// Owns the baseline hop: a process that copies bytes between its stdio and a child's, parsing nothing.
// Usage: node bench/relay.mjs COMMAND [ARGS...]. It exits with its child; closing its stdin closes the child's.
import { spawnChild } from "./hop-spawn.mjs";

const [command, ...args] = process.argv.slice(2);
if (command === undefined) {
  process.stderr.write("usage: node bench/relay.mjs COMMAND [ARGS...]\n");
  process.exit(2);
}
const child = spawnChild(command, args);
process.stdin.pipe(child.stdin);
child.stdout.pipe(process.stdout);
child.on("error", (error) => {
  process.stderr.write(`relay: cannot start ${command}: ${error.message}\n`);
  process.exit(1);
});
child.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
