// A process's output is all delivered once it exits, even from a pipe its reader paused to let a slow consumer catch
// up and never resumed: Node reads a child's pipes on at its exit. The process child's output log relies on it (it
// pauses the pipes while its writes queue), as does a stdio child's output held for a client that is not reading.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { GroupProcess } from "../../../src/children/processes/group-process.js";

/** Less than a pipe holds: the process writes it and exits without waiting for its reader. */
const REST = 48 * 1024;
let started: GroupProcess | undefined;

afterEach(async () => {
  await started?.stop();
  started = undefined;
});

describe("a GroupProcess's output at its exit", () => {
  it("reads on a pipe its reader paused and never resumed, to the end of what the process wrote", async () => {
    // The process writes a first line, waits until the test has paused its reader, then writes the rest and exits.
    const gate = join(mkdtempSync(join(tmpdir(), "gaggle-drain-")), "paused");
    const script = [
      `process.stdout.write("first\\n");`,
      `const go = () => require("node:fs").existsSync(${JSON.stringify(gate)}) ? process.stdout.write(Buffer.alloc(${REST}, 120), () => process.exit(0)) : setTimeout(go, 10);`,
      `go();`,
    ].join("\n");
    started = await GroupProcess.start({
      command: process.execPath,
      args: ["-e", script],
      cwd: process.cwd(),
      env: { PATH: process.env.PATH ?? "" },
      stdin: "ignore",
      graceMs: 200,
    });
    let received = 0;
    started.stdout.on("data", (chunk: Buffer) => {
      received += chunk.length;
      // The reader stops after its first chunk, as a consumer whose queue is full does, and is never told to go on.
      started!.stdout.pause();
      writeFileSync(gate, "");
    });
    const exit = await started.exited;
    expect(exit).toEqual({ code: 0, signal: null });
    expect(received).toBe("first\n".length + REST);
  });
});
