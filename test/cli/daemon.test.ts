// The daemon: stdio clients of one config share one gaggle through relays; background work outlives a client;
// the daemon stops when idle or told to, and leaves no process behind, kill -9 included.
import { randomUUID } from "node:crypto";
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { DaemonRecord } from "../../src/cli/daemon-files.js";
import { runCli } from "../helpers/cli.js";
import { textOf, writeConfig } from "../helpers/gaggle.js";
import { listen } from "../helpers/notifications.js";
import { CLI, fixtureChild } from "../helpers/paths.js";
import { until } from "../helpers/poll.js";
import { carrying, isAlive, killCarrying, waitGone } from "../helpers/processes.js";
import { processJson, run, type Status } from "../virtual/process/helpers.js";

/** In the environment of every relay this file starts, so that the daemon and all it started can be found. */
const MARK = `GAGGLE_DAEMON_TEST=${randomUUID()}`;
const STATE = process.env.XDG_STATE_HOME!;

afterAll(() => killCarrying(MARK));

interface Relay {
  client: Client;
  pid: number;
  /** What the relay wrote to stderr so far (a client keeps it in its log). */
  stderr(): string;
  /** Settles once the relay's stderr has been read to its end: its process is gone and every line it wrote is in stderr(). */
  stderrEnded: Promise<void>;
  call(server: string, tool: string, args?: Record<string, unknown>): Promise<CallToolResult>;
  close(): Promise<void>;
}

async function relay(config: string, env: Record<string, string> = {}): Promise<Relay> {
  const [name, value] = MARK.split("=") as [string, string];
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI, "--config", config],
    env: { ...(process.env as Record<string, string>), GAGGLE_STANDALONE: "", [name]: value, ...env },
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
  const stderrEnded = new Promise<void>((resolve) => transport.stderr!.once("end", resolve));
  const client = new Client({ name: "daemon-test", version: "0.0.0" }, { capabilities: {} });
  await client.connect(transport);
  const call = async (server: string, tool: string, args: Record<string, unknown> = {}) =>
    (await client.callTool({ name: "execute_child_tool", arguments: { server_id: server, tool_name: tool, arguments: args } })) as CallToolResult;
  return { client, pid: transport.pid!, stderr: () => stderr, stderrEnded, call, close: () => client.close() };
}

/** The records of the daemons in the state dir, the dead ones' too. */
function records(): DaemonRecord[] {
  const dir = join(STATE, "gaggle", "daemon");
  let names: string[];
  try {
    names = readdirSync(dir).filter((name) => name.endsWith(".json"));
  } catch {
    return [];
  }
  // A daemon moving to its edited config's key removes its record from under the listing.
  return names.flatMap((name) => {
    try {
      return [JSON.parse(readFileSync(join(dir, name), "utf8")) as DaemonRecord];
    } catch {
      return [];
    }
  });
}

/** The pids of the daemons running now (their records in the state dir). */
function daemons(): number[] {
  return records()
    .map((record) => record.pid)
    .filter(isAlive);
}

const configText = (extra = "") => [`[gateway]\n${extra}\n`, fixtureChild("echo", "echo.mjs", 'env = { WHO = "${WHO:-nobody}" }')].join("\n");
const config = (extra = "") => writeConfig(configText(extra));
const pidOf = async (client: Relay) => Number(textOf(await client.call("echo", "pid")));

describe("two stdio clients of one config", () => {
  it("share one daemon and one child process, and background work outlives the client that started it", async () => {
    const path = config();
    const first = await relay(path);
    const second = await relay(path);
    try {
      expect(await pidOf(first)).toBe(await pidOf(second));
      expect(daemons()).toHaveLength(1);
      const started = await run(first.client, "sleep 300");
      await first.close();
      expect(await waitGone([first.pid])).toEqual([]);
      const seen = await processJson<Status>(second.client, "gg_process_status", { pid: started.pid });
      expect(seen.status).toBe("running");
      const killed = await processJson<Status>(second.client, "gg_process_kill", { pid: started.pid });
      expect(killed.status).toBe("killed");
      expect(await waitGone([started.pid])).toEqual([]);
    } finally {
      await first.close();
      await second.close();
      await runCli(["stop", "--config", path], { env: process.env });
    }
  });

  it("share the running daemon while an edit of the config does not load: the later one is served the config in force and told why", async () => {
    const path = config();
    const first = await relay(path);
    try {
      const child = await pidOf(first);
      const [daemon] = daemons();
      writeFileSync(path, `${readFileSync(path, "utf8")}\n[mcp_servers.broken\n`);
      await until(
        async () => JSON.parse((await runCli(["status", "--json", "--config", path], { env: process.env })).stdout) as { config_errors: string[] },
        (live) => live.config_errors.length > 0,
      );
      const second = await relay(path);
      try {
        // The daemon in force, its child and its errors; not a daemon of its own serving no children.
        expect(await pidOf(second)).toBe(child);
        expect(daemons()).toEqual([daemon]);
        const listed = textOf((await second.client.callTool({ name: "list_registered_children", arguments: {} })) as CallToolResult);
        expect(listed).toMatch(/TOML syntax error/);
      } finally {
        await second.close();
      }
    } finally {
      await first.close();
      await runCli(["stop", "--config", path], { env: process.env });
    }
  });

  it("share the running daemon after an edit that changes only a comment of the config", async () => {
    const path = config();
    const first = await relay(path);
    try {
      const child = await pidOf(first);
      const [daemon] = daemons();
      const before = records().find((record) => record.pid === daemon)!.key;
      writeFileSync(path, `# the children of this project\n${readFileSync(path, "utf8")}`);
      // The daemon moves to the key of the edited text, which a client started now computes.
      await until(
        () => records().find((record) => record.pid === daemon)?.key,
        (key) => key !== undefined && key !== before,
      );
      const second = await relay(path);
      try {
        expect(await pidOf(second)).toBe(child);
        expect(daemons()).toEqual([daemon]);
      } finally {
        await second.close();
      }
    } finally {
      await first.close();
      await runCli(["stop", "--config", path], { env: process.env });
    }
  });

  it("of another value reaching ${VAR} get a daemon of their own", async () => {
    const path = config();
    const alice = await relay(path, { WHO: "alice" });
    const bob = await relay(path, { WHO: "bob" });
    try {
      expect(textOf(await alice.call("echo", "env", { name: "WHO" }))).toBe("alice");
      expect(textOf(await bob.call("echo", "env", { name: "WHO" }))).toBe("bob");
      expect(await pidOf(alice)).not.toBe(await pidOf(bob));
    } finally {
      await alice.close();
      await bob.close();
      await runCli(["stop", "--config", path], { env: { ...process.env, WHO: "alice" } });
      await runCli(["stop", "--config", path], { env: { ...process.env, WHO: "bob" } });
    }
  });
});

describe("gaggle status", () => {
  it("reads the running daemon's live state: its children with their pids, its clients, its status page", async () => {
    const path = config();
    const client = await relay(path);
    try {
      const child = await pidOf(client);
      const [daemon] = daemons();
      const status = await runCli(["status", "--json", "--config", path], { env: process.env });
      expect(status.code).toBe(0);
      const live = JSON.parse(status.stdout) as {
        daemon: { pid: number; admin_url: string };
        children: Array<{ server_id: string; pid: number | null; status: string; calls: number }>;
        clients: unknown[];
      };
      expect(live.daemon.pid).toBe(daemon);
      expect(live.children.find((row) => row.server_id === "echo")).toMatchObject({ pid: child, status: "running" });
      expect(live.clients).toHaveLength(1);
      const table = await runCli(["status", "--config", path], { env: process.env });
      expect(table.stdout).toContain(`gaggle daemon pid ${daemon}`);
      expect(await runCli(["status", "ech", "--config", path], { env: process.env })).toMatchObject({
        code: 2,
        stderr: 'gaggle: no child server named "ech" in the running daemon; did you mean "echo"? (gaggle list shows them)\n',
      });
      expect(table.stdout).toMatch(new RegExp(`echo\\s+stdio\\s+running\\s+${child}`));
      const web = await runCli(["status", "--web", "--config", path], { env: process.env });
      const [url, token] = web.stdout.trim().split("#token=") as [string, string];
      expect(url).toBe(live.daemon.admin_url);
      // The admin port is open to every user of the machine: its status answers only the token the record holds.
      expect((await fetch(new URL("api/status", url))).status).toBe(401);
      const withToken = await fetch(new URL("api/status", url), { headers: { authorization: `Bearer ${token}` } });
      expect(withToken.ok).toBe(true);
    } finally {
      await client.close();
      await runCli(["stop", "--config", path], { env: process.env });
    }
  });

  it("shows under a failed child the line of its stderr that names the cause", async () => {
    const path = writeConfig([fixtureChild("echo", "echo.mjs"), fixtureChild("broken", "exit-at-start.mjs", 'startup = "eager"')].join("\n"));
    const client = await relay(path);
    try {
      const table = await until(
        async () => (await runCli(["status", "--config", path], { env: process.env })).stdout,
        (stdout) => /broken\s+stdio\s+failed/.test(stdout),
      );
      expect(table).toContain("broken: failed to start: exited (code 1)\n  -> its stderr says: fatal: FIXTURE_API_KEY is not set\n");
    } finally {
      await client.close();
      await runCli(["stop", "--config", path], { env: process.env });
    }
  });

  it("cancels at the child a call whose client quits mid-call (its relay killed), saying why, counts it as no failure, and serves on", async () => {
    const path = writeConfig([fixtureChild("proto", "protocol.mjs"), fixtureChild("echo", "echo.mjs")].join("\n"));
    const watcher = await relay(path);
    const leaving = await relay(path);
    const stderr = async () =>
      (
        JSON.parse(textOf((await watcher.client.callTool({ name: "get_child_status", arguments: { server_id: "proto" } })) as CallToolResult)) as {
          stderr: string[];
        }
      ).stderr;
    try {
      void leaving.call("proto", "slow_cancel", { ms: 60_000 }).catch(() => undefined);
      await until(stderr, (lines) => lines.includes("call slow_cancel"));
      process.kill(leaving.pid, "SIGKILL");
      const lines = await until(stderr, (seen) => seen.includes("protocol: cancelled slow_cancel"));
      expect(lines).toContain("cancel reason: the client's session ended");
      const live = JSON.parse((await runCli(["status", "--json", "--config", path], { env: process.env })).stdout) as {
        children: Array<{ server_id: string; status: string; errors: number; last_error: unknown }>;
      };
      expect(live.children.find((child) => child.server_id === "proto")).toMatchObject({ status: "running", errors: 0, last_error: null });
      expect(textOf(await watcher.call("echo", "echo", { text: "still served" }))).toBe("still served");
    } finally {
      await watcher.close();
      await runCli(["stop", "--config", path], { env: process.env });
    }
  });

  it("names a running child's latest failed call by its code and message", async () => {
    const path = config();
    const client = await relay(path);
    try {
      expect((await client.call("echo", "add", { a: "one", b: 2 })).isError).toBe(true);
      const table = (await runCli(["status", "--config", path], { env: process.env })).stdout;
      expect(table).toMatch(/\necho: last call failed with INVALID_ARGS at \S+: invalid arguments for echo\.add: arguments\.a: must be number/);
      expect(table).not.toContain("[object Object]");
    } finally {
      await client.close();
      await runCli(["stop", "--config", path], { env: process.env });
    }
  });

  it("reaches the live state after an edit of the config's tokens, with the token the daemon rewrote in its record", async () => {
    const [oldToken, newToken] = ["daemon-old-token-5Rw8nB2qLx", "daemon-new-token-7Tk3mV9pJz"];
    const path = config(`auth_tokens = { ann = "${oldToken}" }`);
    const client = await relay(path);
    try {
      const child = await pidOf(client);
      const [daemon] = daemons();
      const recorded = () => records().find((record) => record.pid === daemon);
      expect(recorded()?.admin_token).toBe(oldToken);
      const statusWith = async (token: string) =>
        (await fetch(new URL("api/status", recorded()!.admin_url!), { headers: { authorization: `Bearer ${token}` } })).status;
      const live = async () => {
        const status = await runCli(["status", "--json", "--config", path], { env: process.env });
        expect(status.code, status.stderr).toBe(0);
        return JSON.parse(status.stdout) as { daemon?: { pid: number }; children: Array<{ server_id: string; pid: number | null }> };
      };

      writeFileSync(path, readFileSync(path, "utf8").replace(oldToken, newToken));
      await until(
        () => recorded()?.admin_token,
        (token) => token === newToken,
      );
      expect(await statusWith(oldToken)).toBe(401);
      expect(await statusWith(newToken)).toBe(200);
      // Only the live state names the daemon: without it, gaggle status would show the children from the config.
      const read = await live();
      expect(read.daemon?.pid).toBe(daemon);
      expect(read.children.find((row) => row.server_id === "echo")?.pid).toBe(child);

      // A config that names no token any more: the daemon takes the token it made itself, and records that.
      writeFileSync(path, readFileSync(path, "utf8").replace(`auth_tokens = { ann = "${newToken}" }`, ""));
      const own = await until(
        () => recorded()?.admin_token,
        (token) => typeof token === "string" && token !== newToken,
      );
      expect(await statusWith(newToken)).toBe(401);
      expect(await statusWith(own!)).toBe(200);
      expect((await live()).daemon?.pid).toBe(daemon);
    } finally {
      await client.close();
      await runCli(["stop", "--config", path], { env: process.env });
    }
  });
});

describe("the daemon", () => {
  it("moved to its edited config's key takes its log along, where gaggle status and gaggle logs find it", async () => {
    const path = config();
    const client = await relay(path);
    try {
      await pidOf(client);
      const [daemon] = daemons();
      const before = records().find((record) => record.pid === daemon)!.key;
      writeFileSync(path, readFileSync(path, "utf8").replace("nobody", "somebody"));
      await until(
        () => records().find((record) => record.pid === daemon)?.key,
        (key) => key !== undefined && key !== before,
      );
      const status = await runCli(["status", "--json", "--config", path], { env: process.env });
      const log = (JSON.parse(status.stdout) as { daemon: { log: string } }).daemon.log;
      // One log from its start on: the lines from before the move and the line of the move.
      expect(readFileSync(log, "utf8")).toMatch(/gaggle daemon serving[\s\S]*daemon moved to the edited config's key/);
      const logs = await runCli(["logs", "--config", path], { env: process.env });
      expect(logs.stderr).toBe(`gaggle: ${log}\n`);
      expect(logs.stdout).toMatch(/daemon moved to the edited config's key/);
    } finally {
      await client.close();
      await runCli(["stop", "--config", path], { env: process.env });
    }
  });

  it("moved to its edited config's key is named, log and all, by a relay connected before the move when it ends", async () => {
    const path = config();
    const client = await relay(path);
    await pidOf(client);
    const [daemon] = daemons();
    const before = records().find((record) => record.pid === daemon)!.key;
    writeFileSync(path, readFileSync(path, "utf8").replace("nobody", "somebody"));
    const moved = await until(
      () => records().find((record) => record.pid === daemon)?.key,
      (key) => key !== undefined && key !== before,
    );
    const log = join(STATE, "gaggle", "daemon", `${moved}.log`);
    await until(
      () => existsSync(log),
      (there) => there,
    );
    await runCli(["stop", "--config", path], { env: process.env });
    expect(await waitGone([daemon!, client.pid])).toEqual([]);
    await client.stderrEnded;
    expect(client.stderr()).toContain(`its log is ${log}\n`);
    await client.close();
  });

  it("stops once it has had no client for daemon_idle_ms, and leaves no process", async () => {
    const path = config("daemon_idle_ms = 300");
    const client = await relay(path);
    const child = await pidOf(client);
    const [daemon] = daemons();
    expect(daemon).toBeDefined();
    await client.close();
    expect(await waitGone([daemon!, child])).toEqual([]);
    await until(
      () => carrying(MARK),
      (left) => left.length === 0,
    );
  });

  it("started on a config that does not load takes the daemon_idle_ms of the first one that does, and warns only of keys it cannot apply", async () => {
    const path = writeConfig("[mcp_servers.broken\n");
    const client = await relay(path);
    const heard = listen(client.client);
    const [daemon] = daemons();
    expect(daemon).toBeDefined();
    // max_sessions bounds an HTTP listener: it is taken when the daemon starts again, and said so.
    writeFileSync(path, configText("daemon_idle_ms = 300\nmax_sessions = 50"));
    await until(
      () => heard.logs,
      (logs) => logs.some((log) => /config file loads again/.test(String(log.data))),
    );
    // Answered after every message the reload sent: a restart warning would be heard by now.
    const child = await pidOf(client);
    const warnings = heard.logs.filter((log) => log.level === "warning").map((log) => String(log.data));
    expect(warnings).toEqual([expect.stringMatching(/^config reloaded, but gateway\.max_sessions changed and takes effect only when/)]);
    await client.close();
    // The default (30 minutes) is far past this wait.
    expect(await waitGone([daemon!, child], 60_000)).toEqual([]);
  });

  it("waits for background work to end before it stops when idle", async () => {
    const path = config("daemon_idle_ms = 200");
    const done = join(mkdtempSync(join(tmpdir(), "daemon-work-")), "done");
    const client = await relay(path);
    await run(client.client, `sleep 1.5 && touch ${done}`);
    const [daemon] = daemons();
    await client.close();
    expect(await waitGone([daemon!])).toEqual([]);
    // Had the daemon stopped while the work ran, it would have killed it before it wrote the file.
    expect(existsSync(done)).toBe(true);
  });

  it("stops on gaggle stop, its children with it", async () => {
    const path = config();
    const client = await relay(path);
    const child = await pidOf(client);
    const [daemon] = daemons();
    const stopped = await runCli(["stop", "--config", path], { env: process.env });
    expect(stopped.stdout).toMatch(/stopped the gaggle daemon/);
    expect(await waitGone([daemon!, child, client.pid])).toEqual([]);
    await client.close();
  });

  it("started with another value of the config's ${VAR} is shown by gaggle status and stopped by gaggle stop, which says so", async () => {
    const path = config();
    const client = await relay(path, { WHO: "someone-else" });
    const child = await pidOf(client);
    const [daemon] = daemons();
    // This shell's key (no WHO) is not the daemon's: it is found by its record's config file.
    const status = await runCli(["status", "--json", "--config", path], { env: { ...process.env, WHO: "" } });
    expect(status.code).toBe(0);
    expect((JSON.parse(status.stdout) as { daemon: { pid: number } }).daemon.pid).toBe(daemon);
    const stopped = await runCli(["stop", "--config", path], { env: { ...process.env, WHO: "" } });
    expect(stopped.code).toBe(0);
    expect(stopped.stdout).toContain(`stopped the gaggle daemon for ${path} (pid ${daemon}): gaggle `);
    expect(stopped.stdout).toContain("started from another build of gaggle or with other values of the config's ${VAR}s");
    expect(await waitGone([daemon!, child, client.pid])).toEqual([]);
    await client.close();
    const none = await runCli(["stop", "--config", path], { env: process.env });
    expect(none.stdout).toBe(`no gaggle daemon runs for ${path}\n`);
  });

  it("whose config does not load in the shell is still shown by gaggle status, and stopped by gaggle stop", async () => {
    // A client that leaves a variable of the shell out of gaggle's environment starts a daemon of a config that
    // does not load there, nor in the shell without the variable, where gaggle status and stop are run.
    const path = writeConfig(["[gateway]\n", fixtureChild("echo", "echo.mjs", 'env = { WHO = "${GAGGLE_DAEMON_TEST_UNSET}" }')].join("\n"));
    const client = await relay(path);
    const [daemon] = daemons();
    const status = await runCli(["status", "--json", "--config", path], { env: process.env });
    expect(status.code).toBe(0);
    const live = JSON.parse(status.stdout) as { daemon: { pid: number }; config_errors: string[] };
    expect(live.daemon.pid).toBe(daemon);
    expect(live.config_errors.join("\n")).toMatch(/GAGGLE_DAEMON_TEST_UNSET is not set/);
    const stopped = await runCli(["stop", "--config", path], { env: process.env });
    expect(stopped.stdout).toMatch(`stopped the gaggle daemon for ${path} (pid ${daemon})`);
    expect(await waitGone([daemon!, client.pid])).toEqual([]);
    await client.close();
  });

  it("killed with SIGKILL leaves no process: its children, their watchdog and the relays go too, each relay saying why", async () => {
    const path = config();
    const client = await relay(path);
    const child = await pidOf(client);
    const started = await run(client.client, "sleep 300");
    const [daemon] = daemons();
    process.kill(daemon!, "SIGKILL");
    expect(await waitGone([daemon!, child, started.pid, client.pid])).toEqual([]);
    // The relay's pid can be gone before its last stderr bytes have crossed the pipe.
    await client.stderrEnded;
    expect(client.stderr()).toMatch(
      /the daemon ended this connection: it was stopped \(gaggle stop\) or killed; reconnect to start it again; its log is \S+\.log/,
    );
    await until(
      () => carrying(MARK),
      (left) => left.length === 0,
    );
    await client.close();
  });
});
