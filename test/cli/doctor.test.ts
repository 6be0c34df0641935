// `gaggle doctor`: every configured child started at once, and for each either that it works or the real cause of
// its failure with what to do; nothing it started outlives it. `gaggle validate` warns of commands not on PATH.
import { randomUUID } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createServer } from "node:http";
import { createServer as createTlsServer, type Server as TlsServer } from "node:https";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { startFailure } from "../../src/children/calls/call-failure.js";
import { startTimeoutReason } from "../../src/children/calls/slow-start.js";
import type { ChildStatus } from "../../src/children/child.js";
import { diagnose } from "../../src/cli/diagnosis.js";
import { runCli } from "../helpers/cli.js";
import { childConfigOf } from "../helpers/config.js";
import { writeConfig } from "../helpers/gaggle.js";
import { startListeningFixture, type ListeningFixture } from "../helpers/listening-fixture.js";
import { fixture, fixtureChild, NO_BUILT_INS } from "../helpers/paths.js";

let gate: ListeningFixture;
let closedPort: number;
/** An HTTPS server whose certificate no one trusts: it signed its own. */
let untrusted: TlsServer;
/** On the command line of every child this file starts, so that a leftover one can be found. */
const MARK = `doctor-${randomUUID()}`;

beforeAll(async () => {
  gate = await startListeningFixture("oauth-gate.mjs");
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  closedPort = (probe.address() as AddressInfo).port;
  await new Promise((resolve) => probe.close(resolve));
  untrusted = createTlsServer({ key: readFileSync(fixture("tls/self-signed.key")), cert: readFileSync(fixture("tls/self-signed.crt")) }, (_, res) =>
    res.end(),
  );
  await new Promise<void>((resolve) => untrusted.listen(0, "127.0.0.1", resolve));
});
afterAll(() => {
  gate?.kill();
  untrusted?.close();
});

const child = (name: string, script: string, extra = "") =>
  `[mcp_servers.${name}]\ncommand = "node"\nargs = [${JSON.stringify(fixture(script))}, "${MARK}"]\n${extra}`;

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** Processes whose command line carries MARK. */
function leftovers(): string[] {
  return readdirSync("/proc")
    .filter((entry) => /^\d+$/.test(entry))
    .flatMap((pid) => {
      try {
        const cmdline = readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ");
        return cmdline.includes(MARK) ? [`${pid}: ${cmdline}`] : [];
      } catch {
        return [];
      }
    });
}

describe("gaggle doctor", () => {
  it("says for each child that it works or why not, with what to do, and exits 1 when any failed", async () => {
    const config = writeConfig(
      [
        NO_BUILT_INS,
        child("echo", "echo.mjs"),
        child("noisy", "garbage-stdout.mjs"),
        `[mcp_servers.missing]\ncommand = "no-such-command-${MARK}"\n`,
        // Long enough for the fixture to boot and say why it waits on a loaded machine; it never gets to serve.
        child("slow", "slow.mjs", `env = { SLOW_START_MS = "60000" }\nstartup_timeout_ms = 3000\n`),
        `[mcp_servers.down]\ntype = "http"\nurl = "http://127.0.0.1:${closedPort}/mcp"\n`,
        `[mcp_servers.gated]\ntype = "http"\nurl = "http://127.0.0.1:${gate.port}/mcp"\n`,
        `[mcp_servers.nowhere]\ntype = "http"\nurl = "http://gaggle-doctor.invalid/mcp"\n`,
        `[mcp_servers.wrongpath]\ntype = "http"\nurl = "http://127.0.0.1:${gate.port}/no-mcp-here"\n`,
        `[mcp_servers.untrusted]\ntype = "http"\nurl = "https://localhost:${(untrusted.address() as AddressInfo).port}/mcp"\n`,
        child("dies", "exit-at-start.mjs"),
        `[mcp_servers.gone]\ncommand = "node"\nargs = ["${MARK}-missing.mjs"]\n`,
        `[mcp_servers.x11]\ntype = "http"\nurl = "http://127.0.0.1:6000/mcp"\n`,
      ].join("\n"),
    );
    const out = await runCli(["doctor", "--config", config]);
    expect(out.code).toBe(1);
    const report = (name: string) => {
      const lines = out.stdout.split("\n");
      const at = lines.findIndex((line) => line.startsWith(`${name} `));
      const end = lines.findIndex((line, i) => i > at && /^\S/.test(line));
      return lines.slice(at, end === -1 ? undefined : end).join("\n");
    };
    expect(report("echo")).toMatch(/^echo +ok +2025-11-25 +10 tool\(s\) +started in \d+(\.\d)? m?s$/);
    expect(report("noisy")).toMatch(/ok .*\n +-> it wrote 3 line\(s\) to stdout that are not JSON-RPC/);
    expect(report("missing")).toMatch(new RegExp(`FAILED  command not found: no-such-command-${MARK} is not on PATH \\(.*/usr/bin.*\\)`));
    expect(report("missing")).toContain("-> install it, or give its full path in mcp_servers.missing.command");
    expect(report("slow")).toContain("FAILED  did not answer initialize within 3000ms (startup_timeout_ms)");
    expect(report("slow")).toContain("-> it was still starting when startup_timeout_ms (3000 ms) ran out: raise mcp_servers.slow.startup_timeout_ms");
    expect(report("slow")).toContain("slow fixture: waiting 60000 ms before serving");
    expect(report("down")).toContain(`ECONNREFUSED 127.0.0.1:${closedPort}`);
    expect(report("down")).toContain(`-> nothing listens at 127.0.0.1:${closedPort}: start the server, or check the port in mcp_servers.down.url`);
    // The cause fetch hides behind "fetch failed" is the reason given; resolving may fail outright or for now.
    expect(report("nowhere")).toMatch(/FAILED .*(ENOTFOUND|EAI_AGAIN) gaggle-doctor\.invalid/);
    expect(report("nowhere")).toContain("-> the host gaggle-doctor.invalid does not resolve (DNS): check mcp_servers.nowhere.url, or the network");
    expect(report("untrusted")).toContain("FAILED  self-signed certificate");
    expect(report("untrusted")).toMatch(
      /-> the TLS certificate of localhost:\d+ was refused: check the url's host name, or trust its issuer \(NODE_EXTRA_CA_CERTS\)/,
    );
    expect(report("wrongpath")).toContain(
      `-> no MCP endpoint at http://127.0.0.1:${gate.port}/no-mcp-here: check the path (often /mcp, or /sse for the legacy transport)`,
    );
    expect(report("gated")).toContain("FAILED  gated needs you to sign in");
    expect(report("gated")).toMatch(/-> run: gaggle auth login --config \S+\.toml gated/);
    expect(report("dies")).toContain("FAILED  exited (code 1)");
    expect(report("dies")).toContain("fatal: FIXTURE_API_KEY is not set");
    // The line naming the cause, not the stack trace after it; once, though the child was started twice (the probe).
    expect(report("gone")).toMatch(new RegExp(`-> its stderr says: Error: Cannot find module '.*${MARK}-missing\\.mjs'$`));
    expect(report("gone")).not.toContain("requireStack");
    expect(report("x11")).toContain("FAILED  fetch refuses port 6000: the Fetch standard blocks it, as the port of another protocol");
    expect(report("x11")).toContain("-> serve the child on another port, and change it in mcp_servers.x11.url");
    // Its own logs stay out of the way of the report.
    expect(out.stderr).not.toContain('"level"');
    expect(leftovers()).toEqual([]);
  });

  it("examines only the children named, answers one JSON document with --json, and exits 0 when all work", async () => {
    const config = writeConfig([NO_BUILT_INS, fixtureChild("echo", "echo.mjs"), child("dies", "exit-at-start.mjs")].join("\n"));
    const out = await runCli(["doctor", "echo", "--json", "--config", config]);
    expect(out.code).toBe(0);
    expect(JSON.parse(out.stdout)).toEqual({
      ok: true,
      children: [{ name: "echo", ok: true, protocol: "2025-11-25", tools: 10, start_ms: expect.any(Number) }],
    });
  });

  it("records every list of a child it started in the catalog, so a gateway's first lists of it start nothing", async () => {
    const state = mkdtempSync(join(tmpdir(), "doctor-state-"));
    const config = writeConfig([`[gateway]\nstate_dir = ${JSON.stringify(state)}\n`, NO_BUILT_INS, fixtureChild("echo", "echo.mjs")].join("\n"));
    expect((await runCli(["doctor", "echo", "--config", config])).code).toBe(0);
    const [file] = readdirSync(join(state, "catalog")).filter((name) => name.startsWith("echo."));
    const entry = JSON.parse(readFileSync(join(state, "catalog", file!), "utf8")) as { lists: Record<string, unknown[]> };
    expect(Object.keys(entry.lists).sort()).toEqual(["prompts", "resourceTemplates", "resources", "tools"]);
    expect(entry.lists.prompts!.length).toBeGreaterThan(0);
  });

  it("gives the line of a child's stderr that names the cause in --json too", async () => {
    const config = writeConfig([NO_BUILT_INS, `[mcp_servers.gone]\ncommand = "node"\nargs = ["${MARK}-missing.mjs"]\n`].join("\n"));
    const out = await runCli(["doctor", "--json", "--config", config]);
    expect(out.code).toBe(1);
    const [gone] = (JSON.parse(out.stdout) as { children: Array<{ advice: string[] }> }).children;
    expect(gone!.advice).toEqual([
      "check mcp_servers.gone.command, args and env",
      expect.stringMatching(/^its stderr says: Error: Cannot find module '/),
    ]);
  });

  it("names the stdout lines that are not JSON-RPC of a child that then failed, first", async () => {
    // A command that is no MCP server over stdio: one prints a banner and waits, one prints its usage and exits.
    const script = (code: string) => `command = "node"\nargs = ["-e", ${JSON.stringify(code)}, "${MARK}"]\n`;
    const config = writeConfig(
      [
        NO_BUILT_INS,
        `[mcp_servers.banner]\n${script("console.log('Listening on port 3000'); setInterval(() => {}, 1000)")}startup_timeout_ms = 3000\n`,
        `[mcp_servers.usage]\n${script("console.log('usage: tool [--port N]'); process.stdout.end(() => setTimeout(() => process.exit(2), 200))")}`,
      ].join("\n"),
    );
    const out = await runCli(["doctor", "--json", "--config", config]);
    expect(out.code).toBe(1);
    const reports = (JSON.parse(out.stdout) as { children: Array<{ name: string; reason: string; advice: string[] }> }).children;
    const advice = (name: string) => reports.find((report) => report.name === name)!.advice;
    // One line a start; a child that exits is started more than once.
    const noise = (line: string) =>
      expect.stringMatching(
        new RegExp(
          `^it wrote \\d+ line\\(s\\) to stdout that are not JSON-RPC, such as ${escape(JSON.stringify(line))}: ` +
            "stdout is the MCP channel, so check that the command runs an MCP server over stdio and that it logs to stderr$",
        ),
      );
    expect(advice("banner")).toEqual([
      noise("Listening on port 3000"),
      "it was still starting when startup_timeout_ms (3000 ms) ran out: raise mcp_servers.banner.startup_timeout_ms",
    ]);
    expect(advice("usage")).toEqual([noise("usage: tool [--port N]"), "check mcp_servers.usage.command, args and env"]);
    expect(leftovers()).toEqual([]);
  });

  it("counts and checks the built-in children: the DuckDB module loaded, ripgrep or the JavaScript search", async () => {
    const config = writeConfig(
      [NO_BUILT_INS, "[virtual.duckdb]\nenabled = true\n", "[virtual.workspace]\nenabled = true\nripgrep = false\n"].join("\n"),
    );
    const validated = await runCli(["validate", "--config", config]);
    expect(validated.stdout).toBe(`${config}: valid; 0 child server(s), 0 enabled; 2 built-in (duckdb, workspace)\n`);
    const out = await runCli(["doctor", "--json", "--config", config]);
    expect(out.code).toBe(0);
    expect(JSON.parse(out.stdout)).toEqual({
      ok: true,
      children: [
        { name: "duckdb", ok: true, built_in: true, notes: [expect.stringMatching(/^DuckDB v\d+\.\d+\.\d+ \(@duckdb\/node-api\)$/)] },
        { name: "workspace", ok: true, built_in: true, notes: ["GrepTool searches with its own JavaScript search (ripgrep = false)"] },
      ],
    });
    const one = await runCli(["doctor", "workspace", "--config", config]);
    expect(one.stdout).toBe("workspace  ok      built-in\n           -> GrepTool searches with its own JavaScript search (ripgrep = false)\n");
  });

  it("names a port fetch refuses and why, in doctor and in a call's failure", async () => {
    const config = writeConfig([NO_BUILT_INS, `[mcp_servers.x11]\ntype = "http"\nurl = "http://127.0.0.1:6000/mcp"\n`].join("\n"));
    const why = "fetch refuses port 6000: the Fetch standard blocks it, as the port of another protocol";
    const doctor = await runCli(["doctor", "x11", "--config", config]);
    expect(doctor.code).toBe(1);
    expect(doctor.stdout).toContain(why);
    expect(doctor.stdout).toContain("serve the child on another port, and change it in mcp_servers.x11.url");
    const call = await runCli(["call", "x11", "anything", "--config", config]);
    expect(JSON.parse(call.stdout)).toMatchObject({
      code: "SERVER_FAILED",
      hint: `${why}; serve the child on another port, and change it in mcp_servers.x11.url`,
    });
  });

  it("gives a call to a remote child that did not start the advice doctor gives", async () => {
    const untrustedPort = (untrusted.address() as AddressInfo).port;
    const config = writeConfig(
      [
        NO_BUILT_INS,
        `[mcp_servers.down]\ntype = "http"\nurl = "http://127.0.0.1:${closedPort}/mcp"\n`,
        `[mcp_servers.wrongpath]\ntype = "http"\nurl = "http://127.0.0.1:${gate.port}/no-mcp-here"\n`,
        `[mcp_servers.untrusted]\ntype = "http"\nurl = "https://localhost:${untrustedPort}/mcp"\n`,
      ].join("\n"),
    );
    const hints = {
      down: `nothing listens at 127.0.0.1:${closedPort}: start the server, or check the port in mcp_servers.down.url`,
      wrongpath: `no MCP endpoint at http://127.0.0.1:${gate.port}/no-mcp-here: check the path (often /mcp, or /sse for the legacy transport)`,
      untrusted: `the TLS certificate of localhost:${untrustedPort} was refused: check the url's host name, or trust its issuer (NODE_EXTRA_CA_CERTS)`,
    };
    for (const [name, hint] of Object.entries(hints)) {
      const call = await runCli(["call", name, "anything", "--config", config]);
      expect(JSON.parse(call.stdout)).toMatchObject({ code: "SERVER_FAILED", hint });
    }
  });

  it("refuses a name that is not a child, suggesting the nearest", async () => {
    const config = writeConfig([NO_BUILT_INS, fixtureChild("echo", "echo.mjs")].join("\n"));
    const out = await runCli(["doctor", "ecko", "--config", config]);
    expect(out.code).toBe(2);
    expect(out.stderr).toContain('gaggle: no child server named "ecko"; did you mean "echo"?');
  });
});

describe("gaggle validate", () => {
  it("warns of a command that is not on PATH, and still calls the file valid", async () => {
    const config = writeConfig([NO_BUILT_INS, `[mcp_servers.missing]\ncommand = "no-such-command-${MARK}"\n`].join("\n"));
    const out = await runCli(["validate", "--config", config]);
    expect(out.code).toBe(0);
    expect(out.stderr).toContain(
      `gaggle: warning: mcp_servers.missing.command: "no-such-command-${MARK}" is not found on PATH; gaggle doctor missing says more`,
    );
  });
});

describe("the causes doctor tells apart", () => {
  const status: ChildStatus = {
    state: "failed",
    kind: "http",
    pid: null,
    startedAt: null,
    restarts: 0,
    lastError: null,
    needsAuth: false,
    stderrTail: [],
    stdoutNoise: { lines: 0, recent: [] },
    toolCount: null,
    protocol: null,
  };
  const remote = childConfigOf(`[mcp_servers.docs]\nurl = "https://docs.example.com/mcp"\n`);
  const fetchFailed = (code: string, message: string) => new TypeError("fetch failed", { cause: Object.assign(new Error(message), { code }) });
  /** A start refused with an HTTP status, as the SDK's transport and gaggle's start report it. */
  const refused = (httpStatus: number) =>
    startFailure(remote, 30_000, "failed to start", [], new StreamableHTTPError(httpStatus, `Error POSTing to endpoint (HTTP ${httpStatus})`));

  it("a host that does not resolve, a refused certificate, and the HTTP statuses a wrong url or header gets", () => {
    expect(diagnose(remote, fetchFailed("ENOTFOUND", "getaddrinfo ENOTFOUND docs.example.com"), { ...status }).advice).toEqual([
      "the host docs.example.com does not resolve (DNS): check mcp_servers.docs.url, or the network",
    ]);
    expect(diagnose(remote, fetchFailed("CERT_HAS_EXPIRED", "certificate has expired"), { ...status }).advice).toEqual([
      "the TLS certificate of docs.example.com was refused: check the url's host name, or trust its issuer (NODE_EXTRA_CA_CERTS)",
    ]);
    expect(diagnose(remote, refused(401), { ...status }).advice[0]).toMatch(/^the server refused gaggle \(401\)/);
    expect(diagnose(remote, refused(403), { ...status }).advice[0]).toMatch(/^the server refused gaggle \(403\)/);
    expect(diagnose(remote, refused(404), { ...status }).advice).toEqual([
      "no MCP endpoint at https://docs.example.com/mcp: check the path (often /mcp, or /sse for the legacy transport)",
    ]);
    // What a code says, not what a message says: a status named only in words is no status.
    expect(diagnose(remote, new Error("Streamable HTTP error: Error POSTing to endpoint (HTTP 404)"), { ...status }).advice).toEqual([
      "check mcp_servers.docs.url and headers, and that the server is up",
    ]);
  });

  it("a first npx run past startup_timeout_ms is told to run once by hand", () => {
    const npx = childConfigOf(
      `[mcp_servers.fs]\ncommand = "npx"\nargs = ["-y", "@modelcontextprotocol/server-filesystem", "."]\nstartup_timeout_ms = 30000\n`,
    );
    const timedOut = startFailure(
      npx,
      30_000,
      `failed to start: ${startTimeoutReason(30_000)}`,
      [],
      new McpError(ErrorCode.RequestTimeout, "Request timed out"),
    );
    const { reason, advice } = diagnose(npx, timedOut, { ...status, kind: "stdio" });
    expect(reason).toBe("did not answer initialize within 30000ms (startup_timeout_ms)");
    expect(advice).toEqual([
      "it was still starting when startup_timeout_ms (30000 ms) ran out: raise mcp_servers.fs.startup_timeout_ms",
      "a first `npx` run downloads the package and may compile it: run `npx -y @modelcontextprotocol/server-filesystem .` once by hand, then try again",
    ]);
  });
});
