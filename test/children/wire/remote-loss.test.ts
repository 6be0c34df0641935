// A Streamable HTTP child whose server goes away or restarts: calls fail at once, and the next works on a new session.
import { afterEach, describe, expect, it } from "vitest";
import { McpChild } from "../../../src/children/mcp-child.js";
import { Switchboard } from "../../../src/children/switchboard.js";
import { childConfigOf } from "../../helpers/config.js";
import { textOf } from "../../helpers/gaggle.js";
import { refusal } from "../../helpers/mcp-child.js";
import { startHttpFixture, type HttpFixture } from "../../helpers/http-fixture.js";
import { STATE_DIR } from "../../helpers/paths.js";
import { until } from "../../helpers/poll.js";

/** The server answers GET with 405: no standalone stream is there to notice first that it went away. */
const NO_GET_STREAM = { args: ["--no-get-stream"] };

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {});
});

async function childOf(server: HttpFixture): Promise<McpChild> {
  // A minute of timeout: a call that waited for it would fail this test by the test's own timeout first.
  const entry = `[mcp_servers.remote]\ntype = "http"\nurl = "${server.origin}/mcp"\ntimeout_ms = 60000\n`;
  const child = new McpChild(childConfigOf(entry), { shutdownGraceMs: 500, stateDir: STATE_DIR, switchboard: new Switchboard() });
  cleanups.push(() => child.close());
  return child;
}

describe("a remote child whose server goes away", () => {
  it("fails a call whose answer was streaming at once, without waiting for its timeout", async () => {
    const server = await startHttpFixture(undefined, NO_GET_STREAM);
    cleanups.push(() => server.stop());
    const child = await childOf(server);
    let progressed!: () => void;
    const streaming = new Promise<void>((resolve) => (progressed = resolve));
    // Progress travels on the call's own response stream, so that stream is open when the server dies.
    const call = refusal(child.callTool("progress", { steps: 100, delay_ms: 100 }, { onprogress: () => progressed() }));
    await streaming;
    await server.kill();
    const failure = await call;
    expect(failure.code).toBe("SERVER_FAILED");
    expect(failure.message).toMatch(/^remote lost its connection \(.+\) while serving tool "progress"/);
    expect(child.status()).toMatchObject({ state: "failed", lastError: expect.stringMatching(/^lost its connection .* unexpectedly$/) });
  });

  it("sends a call that never reached the server again on a new session, once: after a restart it succeeds", async () => {
    const first = await startHttpFixture(undefined, NO_GET_STREAM);
    const child = await childOf(first);
    expect(textOf(await child.callTool("echo", { text: "before" }, {}))).toBe("before");
    await first.kill();
    const second = await startHttpFixture(undefined, { port: first.port, ...NO_GET_STREAM });
    cleanups.push(() => second.stop());
    // The new server does not know the old session (404): the call never ran, so it is sent on a new one.
    expect(textOf(await child.callTool("echo", { text: "after" }, {}))).toBe("after");
    expect(child.status()).toMatchObject({ state: "running", restarts: 1 });
    // The server logs the call on stderr, which may be read after its answer.
    const calls = await until(
      () => second.stderr().match(/call echo/g)?.length ?? 0,
      (count) => count > 0,
    );
    expect(calls).toBe(1);
  });

  it("says why a server that is not there cannot be reached: the connection was refused, and where", async () => {
    const server = await startHttpFixture(undefined, NO_GET_STREAM);
    const child = await childOf(server);
    await child.callTool("echo", { text: "x" }, {});
    await server.kill();
    const failure = await refusal(child.callTool("echo", { text: "y" }, {}));
    expect(failure.code).toBe("SERVER_FAILED");
    expect(failure.message).toContain(`remote failed to start: fetch failed: connect ECONNREFUSED 127.0.0.1:${server.port}`);
  });
});

describe("a remote child whose server will not open the standalone GET stream", () => {
  it("keeps its session when the GET is refused with 404, and serves calls on it", async () => {
    const server = await startHttpFixture(undefined, { args: ["--get-stream-404"] });
    cleanups.push(() => server.stop());
    const child = await childOf(server);
    expect((await child.tools()).map((tool) => tool.name)).toContain("echo");
    // The GET is sent in the background after initialize; give its refusal time to arrive before looking.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(textOf(await child.callTool("echo", { text: "still here" }, {}))).toBe("still here");
    expect(child.status()).toMatchObject({ state: "running", restarts: 0, lastError: null });
    expect(server.stderr().match(/streamable session \S+ opened/g)).toHaveLength(1);
  });
});
