// gaggle's warnings about children that fail to start: one line each, naming the child, saying what went wrong and
// what to do, and no stack trace (the fault is in the config or the child, not in gaggle).
import { createServer, type AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { startGaggle } from "../helpers/gaggle.js";
import { fixtureChild, NO_BUILT_INS } from "../helpers/paths.js";
import { until } from "../helpers/poll.js";

/** A loopback port nothing listens on: a connection to it is refused. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

interface LogLine {
  level: number;
  child?: string;
  msg: string;
  reason?: string;
  hint?: string;
  err?: { message: string; hint?: string; stack?: string };
}

describe("warnings about a child that fails to start", () => {
  it("are one line each, naming the child, with what went wrong and the hint, and no stack trace", async () => {
    const children = ["ghost", "quitter", "refused"];
    const gaggle = await startGaggle(
      `${NO_BUILT_INS}\n[gateway]\nexpose = "tools"\n\n` +
        `[mcp_servers.ghost]\ncommand = "gaggle-test-no-such-command"\n\n` +
        `${fixtureChild("quitter", "exit-at-start.mjs")}\n` +
        `[mcp_servers.refused]\nurl = "http://127.0.0.1:${await closedPort()}/mcp"\n`,
    );
    try {
      // In proxy mode the list starts every child (and gaggle already tried them at start-up): each failure is
      // logged once where it happens, and again as the child left out of the list.
      await gaggle.client.listTools();
      const warningsOf = (text: string, child: string) =>
        text
          .split("\n")
          .filter((line) => line.startsWith("{"))
          .map((line) => JSON.parse(line) as LogLine)
          .filter((line) => line.level === 40 && line.child === child);
      const stderr = await until(
        () => gaggle.stderr(),
        (text) => children.every((child) => warningsOf(text, child).some((line) => line.msg === "child left out of the proxied lists")),
      );
      expect(stderr).not.toContain("    at ");
      expect(stderr).not.toContain('"stack"');
      // In the words of the person who reads the log, who has the command line and not the meta-tools.
      const shown = "check the command, args and env of quitter in the config; `gaggle doctor quitter` starts it and shows its stderr";
      expect(warningsOf(stderr, "quitter").find((line) => line.msg === "start failed")?.hint).toBe(shown);
      expect(warningsOf(stderr, "quitter").find((line) => line.msg === "child left out of the proxied lists")?.err?.hint).toBe(shown);
      for (const child of children) {
        const started = warningsOf(stderr, child).find((line) => line.msg === "start failed");
        expect(started?.reason, child).toMatch(/^failed to start: /);
        expect(started?.hint, child).toContain(child);
        // Said once: the start at start-up does not repeat what the child logged.
        expect(
          warningsOf(stderr, child).filter((line) => line.msg === "eager start failed"),
          child,
        ).toEqual([]);
        for (const line of warningsOf(stderr, child).filter((warning) => warning.err)) {
          expect(line.err!.message, child).toContain(child);
          expect(line.err!.hint, child).toEqual(expect.any(String));
        }
      }
      expect(warningsOf(stderr, "ghost").find((line) => line.msg === "start failed")?.reason).toContain(
        '"gaggle-test-no-such-command" was not found',
      );
    } finally {
      await gaggle.close();
    }
  });
});
