// A remote child whose start fails is told what to check about its url, as a call through gaggle and `gaggle doctor`
// both say: a server that never answers, a web page where the MCP endpoint should be, a 401 with no sign-in offered,
// a path with no endpoint. Each against a real HTTP server of this file's own.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { failureOf, startGaggle, type RunningGaggle } from "../helpers/gaggle.js";
import { NO_BUILT_INS } from "../helpers/paths.js";

const servers: Server[] = [];

async function serve(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<string> {
  const server = createServer(handler);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const page = (status: number) => (_req: IncomingMessage, res: ServerResponse) =>
  res.writeHead(status, { "content-type": "text/html; charset=utf-8" }).end(`<!doctype html>\n<html><body><h1>${status}</h1></body></html>\n`);

let urls: Record<"hang" | "site" | "sitemissing" | "wrongpath" | "ssewrongpath" | "locked" | "badtoken", string>;
let gaggle: RunningGaggle;

beforeAll(async () => {
  // Takes the connection and the request, and never answers.
  const hang = await serve(() => {});
  const site = await serve(page(200));
  const siteMissing = await serve(page(404));
  // An HTTP server that serves no MCP at that path: a plain 404, its body ending in a line break.
  const plain = await serve((_req, res) => res.writeHead(404, { "content-type": "text/plain" }).end("Not Found\n"));
  // Refuses everything and publishes no OAuth metadata (every well-known document is missing).
  const locked = await serve((req, res) =>
    req.url?.startsWith("/.well-known/")
      ? res.writeHead(404).end()
      : res.writeHead(401, { "content-type": "application/json" }).end('{"error":"unauthorized"}'),
  );
  urls = {
    hang: `${hang}/mcp`,
    site: `${site}/`,
    sitemissing: `${siteMissing}/mcp`,
    wrongpath: `${plain}/no-mcp-here`,
    ssewrongpath: `${plain}/no-sse-here`,
    locked: `${locked}/mcp`,
    badtoken: `${locked}/mcp`,
  };
  const entry = (name: keyof typeof urls, extra = "", type = "http") => `[mcp_servers.${name}]\ntype = "${type}"\nurl = "${urls[name]}"\n${extra}`;
  gaggle = await startGaggle(
    [
      NO_BUILT_INS,
      entry("hang", "startup_timeout_ms = 500\n"),
      entry("site"),
      entry("sitemissing"),
      entry("wrongpath"),
      entry("ssewrongpath", "", "sse"),
      entry("locked"),
      entry("badtoken", 'headers = { Authorization = "Bearer not-accepted" }\n'),
    ].join("\n"),
  );
});
afterAll(async () => {
  await gaggle?.close();
  for (const server of servers) {
    server.closeAllConnections();
    server.close();
  }
});

/** The reason each child failed for, and the advice it gets, in a call's failure and doctor's report alike. */
function expected(): Record<keyof typeof urls, { reason: string; advice: string }> {
  return {
    hang: {
      reason: "did not answer initialize within 500ms (startup_timeout_ms)",
      advice:
        `nothing at ${urls.hang} answered within startup_timeout_ms (500 ms): check that the server there is up and serves MCP at that url, ` +
        "or raise mcp_servers.hang.startup_timeout_ms if it is slow to answer",
    },
    site: {
      reason: `Streamable HTTP error: ${urls.site} answered with a web page (text/html), not MCP`,
      advice: `${urls.site} serves a web page (text/html), not an MCP endpoint: check the path in mcp_servers.site.url (often /mcp)`,
    },
    sitemissing: {
      reason: `Streamable HTTP error: ${urls.sitemissing} answered with a web page (text/html), not MCP (HTTP 404)`,
      advice: `${urls.sitemissing} serves a web page (text/html), not an MCP endpoint: check the path in mcp_servers.sitemissing.url (often /mcp)`,
    },
    wrongpath: {
      reason: "Streamable HTTP error: Error POSTing to endpoint: Not Found (HTTP 404)",
      advice: `no MCP endpoint at ${urls.wrongpath}: check the path (often /mcp, or /sse for the legacy transport)`,
    },
    // The legacy transport's error names the status itself: it is not said twice.
    ssewrongpath: {
      reason: "SSE error: Non-200 status code (404)",
      advice: `no MCP endpoint at ${urls.ssewrongpath}: check the path (often /mcp, or /sse for the legacy transport)`,
    },
    locked: {
      reason: "the server answered 401 (Unauthorized) and publishes no OAuth metadata (RFC 9728, RFC 8414), so there is nothing to sign in to",
      advice:
        "the server refused gaggle (401) and offers no OAuth sign-in, so it needs credentials gaggle cannot get by signing in: " +
        'give them in mcp_servers.locked.headers, e.g. Authorization = "Bearer ${TOKEN}"',
    },
    badtoken: {
      reason: "the server answered 401 (Unauthorized) and publishes no OAuth metadata (RFC 9728, RFC 8414), so there is nothing to sign in to",
      advice:
        "the server refused gaggle (401) and offers no OAuth sign-in: the credentials in mcp_servers.badtoken.headers were not accepted; " +
        "check the token they carry, and that it is still valid",
    },
  };
}

describe("a remote child that does not start", () => {
  it("fails a call with what to check about its url, and no stderr to read", async () => {
    for (const [name, { reason, advice }] of Object.entries(expected())) {
      const result = await gaggle.meta("execute_child_tool", { server_id: name, tool_name: "anything", arguments: {} });
      // The whole hint: a remote child has no stderr, so none is pointed to.
      expect(failureOf(result), name).toEqual({
        status: "failed",
        code: "SERVER_FAILED",
        error: `${name} failed to start: ${reason}`,
        hint: advice,
      });
    }
  });

  it("is given the same reason and advice by gaggle doctor", async () => {
    const out = await runCli(["doctor", "--json", "--config", gaggle.configPath]);
    expect(out.code).toBe(1);
    const reports = (JSON.parse(out.stdout) as { children: Array<{ name: string; ok: boolean; reason: string; advice: string[] }> }).children;
    for (const [name, { reason, advice }] of Object.entries(expected())) {
      expect(
        reports.find((report) => report.name === name),
        name,
      ).toEqual({ name, ok: false, reason, advice: [advice] });
    }
  });
});
