// Subjects of the contract suite that are real MCP servers: the echo fixture over stdio, Streamable HTTP and SSE.
import { McpChild } from "../../src/children/mcp-child.js";
import type { Switchboard } from "../../src/children/switchboard.js";
import { startHttpFixture, type HttpFixture } from "../helpers/http-fixture.js";
import { fixtureChild, STATE_DIR } from "../helpers/paths.js";
import { until } from "../helpers/poll.js";
import { isAlive } from "../helpers/processes.js";
import { childConfigOf } from "../helpers/config.js";
import type { Subject } from "./harness.js";

/** Long enough that a call which hangs fails the test by its own timeout, never by gaggle's. */
const LIMITS = "timeout_ms = 60000";
const SHUTDOWN_GRACE_MS = 500;

/**
 * The echo fixture's calls, whatever carries them. It logs "call <tool>" as each tools/call arrives (to
 * `stderr()`), and "cancelled sleep" when a sleep is cancelled; each slow call sleeps a different time.
 */
function echoCalls(stderr: () => string) {
  let slowCalls = 0;
  const sleepsSeen = () => stderr().split("call sleep").length - 1;
  return {
    good: { tool: "echo", args: { text: "contract" }, answers: /^contract$/ },
    bad: { tool: "echo", args: { text: 42 } },
    slow: async () => {
      const before = sleepsSeen();
      return {
        tool: "sleep",
        args: { ms: 800 + slowCalls++ },
        working: async () => {
          await until(sleepsSeen, (seen) => seen > before);
        },
      };
    },
  };
}

export async function stdioSubject(switchboard: Switchboard): Promise<Subject> {
  const child = new McpChild(childConfigOf(fixtureChild("stdio_echo", "echo.mjs", LIMITS)), {
    shutdownGraceMs: SHUTDOWN_GRACE_MS,
    stateDir: STATE_DIR,
    switchboard,
  });
  const pids = new Set<number>();
  const notePid = () => {
    const pid = child.status().pid;
    if (pid) pids.add(pid);
  };
  return {
    child,
    ...echoCalls(() => child.status().stderrTail.join("\n")),
    stopsCancelled: async () => {
      await until(
        () => child.status().stderrTail,
        (lines) => lines.includes("cancelled sleep"),
      );
    },
    occupy: async () => {
      await child.tools();
      notePid();
    },
    leftovers: async () => {
      notePid();
      return [...pids].filter(isAlive).map((pid) => `pid ${pid}`);
    },
    crash: {
      kill: async () => {
        notePid();
        process.kill(child.status().pid!, "SIGKILL");
      },
      recover: async () => {},
    },
    dispose: async () => {},
  };
}

/** A child of the HTTP fixture, over Streamable HTTP (`/mcp`) or SSE (`/sse`). */
export async function remoteSubject(switchboard: Switchboard, transport: "http" | "sse"): Promise<Subject> {
  let server: HttpFixture = await startHttpFixture();
  const path = transport === "http" ? "/mcp" : "/sse";
  const entry = `[mcp_servers.${transport}_echo]\ntype = "${transport}"\nurl = "${server.origin}${path}"\n${LIMITS}\n`;
  const child = new McpChild(childConfigOf(entry), { shutdownGraceMs: SHUTDOWN_GRACE_MS, stateDir: STATE_DIR, switchboard });
  const kind = transport === "http" ? "streamable" : "sse";
  return {
    child,
    ...echoCalls(() => server.stderr()),
    stopsCancelled: async () => {
      await until(
        () => server.stderr(),
        (stderr) => stderr.includes("cancelled sleep"),
      );
    },
    occupy: async () => {
      await child.tools();
    },
    leftovers: async () => openSessions(server.stderr(), kind),
    crash: {
      kill: () => server.kill(),
      recover: async () => {
        server = await startHttpFixture(undefined, { port: server.port });
      },
    },
    dispose: () => server.stop(),
  };
}

/** The fixture's sessions that opened and have not closed, from its log lines "<kind> session <id> opened|closed". */
function openSessions(stderr: string, kind: "streamable" | "sse"): string[] {
  const open = new Set<string>();
  for (const [, id, event] of stderr.matchAll(new RegExp(`http fixture: ${kind} session (\\S+) (opened|closed)`, "g"))) {
    if (event === "opened") open.add(id!);
    else open.delete(id!);
  }
  return [...open].map((id) => `${kind} session ${id} open`);
}
