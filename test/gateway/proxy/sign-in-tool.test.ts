// A remote child that needs a person to sign in, in proxy and search modes, behind a real authorization server
// (oidc-provider): it is listed as one tool NAME__authenticate, whose call sends the person to its sign-in page
// through the client's URL elicitation (or answers with the page and the command); once signed in, the child's
// own tools are listed in its place and the client is told the list changed. search_tools names it meanwhile.
import { randomUUID } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ElicitRequestSchema, ToolListChangedNotificationSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { browse, loginInShell, startAuthServer, type AuthServer } from "../../helpers/auth-server.js";
import { runCli } from "../../helpers/cli.js";
import { textOf, writeConfig } from "../../helpers/gaggle.js";
import { startHttpGaggle, type HttpGaggle } from "../../helpers/gaggle-http.js";
import { startListeningFixture, type ListeningFixture } from "../../helpers/listening-fixture.js";
import { envelope, modernCall, modernRequest, type ModernResponse } from "../../helpers/modern-http.js";
import { CLI, NO_BUILT_INS } from "../../helpers/paths.js";
import { until } from "../../helpers/poll.js";
import { killCarrying } from "../../helpers/processes.js";

let as: AuthServer;
let resource: ListeningFixture;
let url: string;
const running: HttpGaggle[] = [];

beforeAll(async () => {
  as = await startAuthServer();
  resource = await startListeningFixture("oauth-protected.mjs", ["--issuer", as.issuer]);
  url = `http://127.0.0.1:${resource.port}/mcp`;
});

afterAll(async () => {
  await Promise.allSettled(running.map((gaggle) => gaggle.stop()));
  resource?.kill();
  await as?.close();
});

/** A gateway of its own state (no sign-in kept from another test), fronting one remote child named `name`. */
const configText = (mode: "tools" | "search", name: string) =>
  [`[gateway]\nexpose = "${mode}"\nlist_wait_ms = 30000\n`, NO_BUILT_INS, `[mcp_servers.${name}]\ntype = "http"\nurl = "${url}"\n`].join("\n");

async function gatewayFor(mode: "tools" | "search", name: string, state = mkdtempSync(join(tmpdir(), "sign-in-tool-"))): Promise<HttpGaggle> {
  const gaggle = await startHttpGaggle(configText(mode, name), { env: { XDG_STATE_HOME: state } });
  running.push(gaggle);
  return gaggle;
}

/** A client that counts tools/list_changed; with `urls`, one that can open pages, played by the person at `browse`. */
async function clientOf(gaggle: HttpGaggle, urls: boolean): Promise<{ client: Client; changes: () => number; asked: string[] }> {
  const client = await gaggle.connect({ client: { capabilities: urls ? { elicitation: { url: {} } } : {} } });
  let changes = 0;
  const asked: string[] = [];
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => void changes++);
  if (urls) {
    client.setRequestHandler(ElicitRequestSchema, (request) => {
      const page = (request.params as { url: string }).url;
      asked.push(page);
      setTimeout(() => void browse(page, as.issuer), 10);
      return { action: "accept" };
    });
  }
  return { client, changes: () => changes, asked };
}

const toolNames = async (client: Client) => (await client.listTools()).tools.map((tool) => tool.name).sort();
const call = async (client: Client, name: string, args: Record<string, unknown> = {}) =>
  JSON.parse(textOf((await client.callTool({ name, arguments: args })) as CallToolResult)) as Record<string, unknown>;

describe("a child that needs a sign-in", () => {
  it("in proxy mode is listed as NAME__authenticate, whose call signs in through the client; then its tools are listed", async () => {
    const gaggle = await gatewayFor("tools", "docs");
    const { client, changes, asked } = await clientOf(gaggle, true);
    expect(
      await until(
        () => toolNames(client),
        (names) => names.length > 0,
      ),
    ).toEqual(["docs__authenticate"]);
    const { tools } = await client.listTools();
    expect(tools[0]!.description).toContain("Sign in to docs");

    const before = changes();
    expect(await call(client, "docs__authenticate")).toMatchObject({ server_id: "docs", status: "signed_in" });
    expect(asked).toEqual([expect.stringMatching(new RegExp(`^${as.issuer}/auth\\?`))]);
    await until(changes, (count) => count > before);
    const names = await toolNames(client);
    expect(names).toContain("docs__echo");
    expect(names).not.toContain("docs__authenticate");
    expect(textOf((await client.callTool({ name: "docs__echo", arguments: { text: "signed in" } })) as CallToolResult)).toBe("signed in");
  });

  it("in search mode is listed as NAME__authenticate and named by search_tools; signing in through the client makes its tools searchable", async () => {
    const gaggle = await gatewayFor("search", "wiki");
    const { client, changes } = await clientOf(gaggle, true);
    // The child starts with gaggle (search mode), is refused, and the client is told its tool list changed.
    await until(changes, (count) => count > 0);
    expect(await toolNames(client)).toEqual(["execute_child_tool", "search_tools", "wiki__authenticate"]);
    const found = await call(client, "search_tools", { query: "echo text" });
    expect(found.needs_sign_in).toEqual([{ server_id: "wiki", how: expect.stringContaining("call wiki__authenticate") }]);

    const before = changes();
    expect(await call(client, "wiki__authenticate")).toMatchObject({ status: "signed_in" });
    await until(changes, (count) => count > before);
    expect(await toolNames(client)).toEqual(["execute_child_tool", "search_tools"]);
    const after = await call(client, "search_tools", { query: "echo text" });
    expect(after.needs_sign_in).toBeUndefined();
    expect((after.hits as unknown[])[0]).toMatchObject({ server_id: "wiki", tool_name: "echo" });
  });

  it("through a client that cannot open pages, answers with the page and the command; the sign-in there lists the child's tools", async () => {
    const gaggle = await gatewayFor("tools", "notes");
    const { client, changes } = await clientOf(gaggle, false);
    expect(
      await until(
        () => toolNames(client),
        (names) => names.length > 0,
      ),
    ).toEqual(["notes__authenticate"]);
    const answer = await call(client, "notes__authenticate");
    expect(answer).toMatchObject({
      server_id: "notes",
      status: "sign_in_needed",
      url: expect.stringMatching(new RegExp(`^${as.issuer}/auth\\?`)),
      command: `gaggle auth login --config ${gaggle.config} notes`,
    });
    const before = changes();
    // The person opens the page on gaggle's machine: the redirect comes back to gaggle, which goes on alone.
    await browse(answer.url as string, as.issuer);
    await until(changes, (count) => count > before);
    // Told at once, the client may list while the child is still starting: then it lists neither tool.
    const names = await until(
      () => toolNames(client),
      (listed) => listed.includes("notes__echo"),
    );
    expect(names).not.toContain("notes__authenticate");
  });
});

describe("a child that needs a sign-in, to a 2026-07-28 client", () => {
  type Result = Record<string, unknown> & {
    resultType?: string;
    requestState?: string;
    inputRequests?: Record<string, { method: string; params: { mode: string; url: string } }>;
    content?: Array<{ text: string }>;
  };
  const URLS = { elicitation: { url: {} } };
  const modern = async (gaggle: HttpGaggle, id: number, method: string, params: Record<string, unknown>, capabilities: object = {}) => {
    const { message } = await modernCall(gaggle.port, {
      id,
      method,
      params: { ...params, _meta: envelope({ "io.modelcontextprotocol/clientCapabilities": capabilities }) },
    });
    if (message.error) throw new Error(JSON.stringify(message.error));
    return message.result as Result;
  };
  const modernNames = async (gaggle: HttpGaggle) =>
    ((await modern(gaggle, 1, "tools/list", {})).tools as Array<{ name: string }>).map((tool) => tool.name).sort();
  /** A subscriptions/listen stream for tool list changes, once acknowledged. */
  const listen = async (gaggle: HttpGaggle): Promise<ModernResponse> => {
    const stream = await modernRequest(gaggle.port, {
      id: "listen",
      method: "subscriptions/listen",
      params: { notifications: { toolsListChanged: true } },
    });
    await stream.waitFor(1);
    return stream;
  };
  const changed = (stream: ModernResponse) => stream.frames.filter((frame) => frame.method === "notifications/tools/list_changed").length;

  for (const mode of ["tools", "search"] as const) {
    it(`in ${mode === "tools" ? "proxy" : "search"} mode: the call's input_required result asks the client to open the page; the retry ends signed in and the child's tools are listed`, async () => {
      const name = `modern_${mode}`;
      const gaggle = await gatewayFor(mode, name);
      const stream = await listen(gaggle);
      expect(
        await until(
          () => modernNames(gaggle),
          (names) => names.includes(`${name}__authenticate`),
        ),
      ).toContain(`${name}__authenticate`);

      const call = { name: `${name}__authenticate`, arguments: {} };
      const first = await modern(gaggle, 2, "tools/call", call, URLS);
      expect(first.resultType).toBe("input_required");
      const [[key, request]] = Object.entries(first.inputRequests!) as [[string, { method: string; params: { mode: string; url: string } }]];
      expect(request).toMatchObject({
        method: "elicitation/create",
        params: { mode: "url", url: expect.stringMatching(new RegExp(`^${as.issuer}/auth\\?`)) },
      });
      const before = changed(stream);
      const retry = modern(
        gaggle,
        3,
        "tools/call",
        { ...call, requestState: first.requestState, inputResponses: { [key]: { action: "accept" } } },
        URLS,
      );
      await browse(request.params.url, as.issuer);
      const done = await retry;
      expect(JSON.parse(done.content![0]!.text)).toMatchObject({ server_id: name, status: "signed_in" });
      await until(
        () => changed(stream),
        (count) => count > before,
      );
      const names = await modernNames(gaggle);
      expect(names).not.toContain(`${name}__authenticate`);
      if (mode === "tools") expect(names).toContain(`${name}__echo`);
      else
        expect(
          (
            JSON.parse((await modern(gaggle, 4, "tools/call", { name: "search_tools", arguments: { query: "echo text" } })).content![0]!.text) as {
              hits: unknown[];
            }
          ).hits[0],
        ).toMatchObject({ server_id: name, tool_name: "echo" });
      stream.abort();
    });
  }

  it("without URL elicitation: answers with the page and the command; the sign-in there lists the child's tools", async () => {
    const gaggle = await gatewayFor("tools", "modern_plain");
    const stream = await listen(gaggle);
    expect(
      await until(
        () => modernNames(gaggle),
        (names) => names.length > 0,
      ),
    ).toEqual(["modern_plain__authenticate"]);
    const answer = await modern(gaggle, 2, "tools/call", { name: "modern_plain__authenticate", arguments: {} });
    expect(answer.resultType).not.toBe("input_required");
    const body = JSON.parse(answer.content![0]!.text) as Record<string, unknown>;
    expect(body).toMatchObject({
      server_id: "modern_plain",
      status: "sign_in_needed",
      url: expect.stringMatching(new RegExp(`^${as.issuer}/auth\\?`)),
      command: `gaggle auth login --config ${gaggle.config} modern_plain`,
    });
    const before = changed(stream);
    await browse(body.url as string, as.issuer);
    await until(
      () => changed(stream),
      (count) => count > before,
    );
    const names = await until(
      () => modernNames(gaggle),
      (listed) => listed.includes("modern_plain__echo"),
    );
    expect(names).not.toContain("modern_plain__authenticate");
    stream.abort();
  });
});

describe("a sign-in made with gaggle auth login in another shell", () => {
  // What proves the running gaggle noticed: its status shows the child running though no client asked anything since.
  it("starts the child in a running gaggle: its clients are told the tool list changed, and its tools replace NAME__authenticate", async () => {
    const state = mkdtempSync(join(tmpdir(), "sign-in-shell-"));
    const gaggle = await gatewayFor("tools", "shell", state);
    const { client, changes } = await clientOf(gaggle, false);
    expect(
      await until(
        () => toolNames(client),
        (names) => names.length > 0,
      ),
    ).toEqual(["shell__authenticate"]);
    const before = changes();
    const childState = async () => {
      const response = await fetch(new URL("/api/status", gaggle.url));
      const { children } = (await response.json()) as { children: Array<{ server_id: string; status: string }> };
      return children.find((child) => child.server_id === "shell")?.status;
    };
    expect(await childState()).toBe("needs_auth");

    expect(await loginInShell(gaggle.config, "shell", state, as.issuer)).toBe(0);
    await until(childState, (status) => status === "running");
    await until(changes, (count) => count > before);
    const names = await toolNames(client);
    expect(names).toContain("shell__echo");
    expect(names).not.toContain("shell__authenticate");
  });

  it("starts the child in the daemon: a stdio client of it is told the tool list changed and lists the child's tools", async () => {
    const state = mkdtempSync(join(tmpdir(), "sign-in-daemon-"));
    const mark = `GAGGLE_SIGN_IN_TEST=${randomUUID()}`;
    const [markName, markValue] = mark.split("=") as [string, string];
    const config = writeConfig(configText("tools", "daemon_docs"));
    const env = { ...(process.env as Record<string, string>), GAGGLE_STANDALONE: "", XDG_STATE_HOME: state, [markName]: markValue };
    const childState = async () => {
      const { stdout } = await runCli(["status", "daemon_docs", "--json", "--config", config], { env });
      return (JSON.parse(stdout) as { children: Array<{ status: string }> }).children[0]?.status;
    };
    const client = new Client({ name: "sign-in-daemon-test", version: "0.0.0" }, { capabilities: {} });
    let changes = 0;
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => void changes++);
    try {
      await client.connect(new StdioClientTransport({ command: process.execPath, args: [CLI, "--config", config], env, stderr: "pipe" }));
      expect(
        await until(
          () => toolNames(client),
          (names) => names.length > 0,
        ),
      ).toEqual(["daemon_docs__authenticate"]);
      const before = changes;
      expect(await childState()).toBe("needs_auth");

      expect(await loginInShell(config, "daemon_docs", state, as.issuer)).toBe(0);
      await until(childState, (status) => status === "running");
      await until(
        () => changes,
        (count) => count > before,
      );
      const names = await toolNames(client);
      expect(names).toContain("daemon_docs__echo");
      expect(names).not.toContain("daemon_docs__authenticate");
    } finally {
      await client.close();
      await runCli(["stop", "--config", config], { env });
      killCarrying(mark);
    }
  });
});
