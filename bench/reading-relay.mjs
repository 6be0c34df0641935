// Owns the second baseline hop: a relay that reads every message it passes, as any gateway that checks what it
// forwards must: each line in either direction is parsed once (JSON.parse) and written on as it came. It checks and
// rewrites nothing else, so what gaggle costs beyond it is gaggle's own work: routing, ids, queues, timeouts.
// Usage: node bench/reading-relay.mjs COMMAND [ARGS...]. It exits with its child; closing its stdin closes the child's.
import { spawnChild } from "./hop-spawn.mjs";
import { eachLine } from "./lines.mjs";

const [command, ...args] = process.argv.slice(2);
if (command === undefined) {
  process.stderr.write("usage: node bench/reading-relay.mjs COMMAND [ARGS...]\n");
  process.exit(2);
}
const child = spawnChild(command, args);

/** Passes each line of `from` to `to` once JSON.parse has read it; a line that is not JSON is dropped, as a check would. */
function relayLines(from, to) {
  return eachLine(from, (line) => {
    try {
      JSON.parse(line);
    } catch {
      return;
    }
    to.write(line + "\n");
  });
}

relayLines(process.stdin, child.stdin).on("end", () => child.stdin.end());
relayLines(child.stdout, process.stdout);
child.on("error", (error) => {
  process.stderr.write(`reading relay: cannot start ${command}: ${error.message}\n`);
  process.exit(1);
});
child.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
