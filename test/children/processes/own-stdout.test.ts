// A GroupProcess given `onStdout` reads the process's stdout through a socket of gaggle's own on the handle
// child_process made (textSocket): every byte arrives as text, a character cut across two reads whole, a reader that
// stops reading still gets all of the output at the exit, and the socket ends, so that the exit is seen at once.
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

function start(script: string, onStdout: (text: string) => boolean | void): Promise<GroupProcess> {
  return GroupProcess.start({
    command: process.execPath,
    args: ["-e", script],
    cwd: process.cwd(),
    env: { PATH: process.env.PATH ?? "" },
    stdin: "ignore",
    graceMs: 200,
    onStdout,
  });
}

/** A file the process waits for before it writes on: the test's signal that it has done its part. */
function gate(): string {
  return join(mkdtempSync(join(tmpdir(), "gaggle-own-stdout-")), "go");
}

function waitFor(path: string): string {
  return `const waitFor = (then) => require("node:fs").existsSync(${JSON.stringify(path)}) ? then() : setTimeout(() => waitFor(then), 10);`;
}

describe("a GroupProcess's stdout read through its own socket", () => {
  it("takes the handle from child_process's stream and hands every character whole to onStdout", async () => {
    // "é" is two bytes in UTF-8: the first is written, then, once the test has seen the text before it, the second.
    const second = gate();
    const script = [
      waitFor(second),
      `process.stdout.write(Buffer.from([0x61, 0xc3]));`,
      `waitFor(() => process.stdout.write(Buffer.from([0xa9, 0x62, 0x0a]), () => process.exit(0)));`,
    ].join("\n");
    const chunks: string[] = [];
    started = await start(script, (text) => {
      chunks.push(text);
      writeFileSync(second, "");
    });
    // The handle was taken: the stream is gaggle's socket, with no 'data' listener of the fallback's.
    expect(started.stdout.listenerCount("data")).toBe(0);
    const exit = await started.exited;
    expect(exit).toEqual({ code: 0, signal: null });
    expect(chunks).toEqual(["a", "éb\n"]);
    // The socket ended by itself (its 'end' is what the exit waits for), with nothing left in the decoder.
    expect(started.stdout.readableEnded).toBe(true);
  });

  it("delivers all of the output at the exit to a reader that stopped reading and never went on", async () => {
    // The process writes a first line, waits until the test has stopped reading, then writes the rest and exits.
    const paused = gate();
    const script = [
      waitFor(paused),
      `process.stdout.write("first\\n");`,
      `waitFor(() => process.stdout.write(Buffer.alloc(${REST}, 120), () => process.exit(0)));`,
    ].join("\n");
    const chunks: number[] = [];
    started = await start(script, (text) => {
      chunks.push(text.length);
      // The reader stops after its first chunk, as a link whose client is not reading does, and is never told to go on.
      writeFileSync(paused, "");
      return chunks.length > 1;
    });
    const exit = await started.exited;
    expect(exit).toEqual({ code: 0, signal: null });
    expect(chunks[0]).toBe("first\n".length);
    expect(chunks.reduce((sum, length) => sum + length, 0)).toBe("first\n".length + REST);
    expect(started.stdout.readableEnded).toBe(true);
  });
});
