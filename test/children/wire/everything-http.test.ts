// The reference server-everything as a Streamable HTTP child and as a stdio child: tool calls and a sampling round trip.
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { createServer } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { CreateMessageRequestSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { openGateway, type Gateway } from "../../helpers/connect.js";
import { textOf } from "../../helpers/gaggle.js";
import { ROOT } from "../../helpers/paths.js";
import { isAlive, waitGone } from "../../helpers/processes.js";

const EVERYTHING = `${ROOT}node_modules/@modelcontextprotocol/server-everything/dist/index.js`;

/** A port that was free a moment ago: server-everything takes its port from $PORT and cannot be told to pick one. */
async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const { port } = probe.address() as { port: number };
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

interface EverythingHttp {
  process: ChildProcess;
  url: string;
  stop(): Promise<void>;
}

/** Starts `server-everything streamableHttp` and resolves once it says it listens. */
async function startEverythingHttp(): Promise<EverythingHttp> {
  const port = await freePort();
  const child = spawn(process.execPath, [EVERYTHING, "streamableHttp"], {
    env: { ...process.env, PORT: String(port) },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server-everything did not listen within 15s:\n${stderr}`)), 15_000);
    child.stderr!.on("data", (chunk: Buffer) => {
      stderr += chunk.toString("utf8");
      if (stderr.includes(`listening on port ${port}`)) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`server-everything exited (code ${code}) before listening:\n${stderr}`));
    });
  });
  return {
    process: child,
    url: `http://127.0.0.1:${port}/mcp`,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, "exit");
      child.kill("SIGTERM");
      if ((await waitGone([child.pid!], 5000)).length > 0) child.kill("SIGKILL");
      await exited;
    },
  };
}

let everything: EverythingHttp;
let config: string;

beforeAll(async () => {
  everything = await startEverythingHttp();
  config = [
    `[mcp_servers.everything_http]\ntype = "http"\nurl = ${JSON.stringify(everything.url)}\n`,
    `[mcp_servers.everything_stdio]\ncommand = ${JSON.stringify(process.execPath)}\nargs = [${JSON.stringify(EVERYTHING)}, "stdio"]\n`,
  ].join("\n");
});
afterAll(async () => {
  const pid = everything?.process.pid;
  await everything?.stop();
  if (pid !== undefined) expect(isAlive(pid)).toBe(false);
});

const execute = async (client: Client, server_id: string, tool_name: string, args: Record<string, unknown>) =>
  (await client.callTool({ name: "execute_child_tool", arguments: { server_id, tool_name, arguments: args } })) as CallToolResult;

describe.each(["stdio", "http"] as const)("gaggle serving %s", (transport) => {
  let gateway: Gateway;
  let client: Client;
  const prompts: string[] = [];

  beforeAll(async () => {
    gateway = await openGateway(transport, config);
    client = await gateway.connect({ capabilities: { sampling: {} } });
    client.setRequestHandler(CreateMessageRequestSchema, (request) => {
      const content = request.params.messages[0]?.content;
      prompts.push(content && "text" in content ? String(content.text) : "?");
      return { model: "test-model", role: "assistant", content: { type: "text", text: `sampled for ${transport}` } };
    });
  });
  afterAll(async () => {
    await gateway?.close();
  });

  describe.each(["everything_http", "everything_stdio"])("child %s", (child) => {
    it("relays echo and get-sum", async () => {
      expect(await execute(client, child, "echo", { message: `hi from ${transport}` })).toEqual({
        content: [{ type: "text", text: `Echo: hi from ${transport}` }],
      });
      expect(textOf(await execute(client, child, "get-sum", { a: 2, b: 40 }))).toBe("The sum of 2 and 40 is 42.");
    });

    it("round-trips trigger-sampling-request's sampling request to the calling client", async () => {
      const result = await execute(client, child, "trigger-sampling-request", { prompt: `${child} asks`, maxTokens: 10 });
      expect(result.isError).toBeFalsy();
      expect(textOf(result)).toContain(`sampled for ${transport}`);
      expect(prompts).toContain(`Resource trigger-sampling-request context: ${child} asks`);
    });
  });
});

describe("a Streamable HTTP child under many calls", () => {
  it("leaves no listener behind per request: 2,000 calls, 16 in flight, and no MaxListenersExceededWarning", async () => {
    const busy = `[mcp_servers.everything_http]\ntype = "http"\nurl = ${JSON.stringify(everything.url)}\nconcurrency = 16\n`;
    const gateway = await openGateway("stdio", busy);
    try {
      const client = await gateway.connect();
      let next = 0;
      const worker = async () => {
        for (let i = next++; i < 2000; i = next++) {
          expect(textOf(await execute(client, "everything_http", "echo", { message: `m${i}` }))).toBe(`Echo: m${i}`);
        }
      };
      await Promise.all(Array.from({ length: 16 }, worker));
      expect(gateway.stderr()).not.toContain("MaxListenersExceededWarning");
    } finally {
      await gateway.close();
    }
  }, 120_000);
});
