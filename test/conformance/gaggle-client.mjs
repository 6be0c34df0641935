#!/usr/bin/env node
// gaggle as the client under test in the conformance suite's client scenarios. The suite starts a mock MCP
// server and runs this script with the mock's URL as the last argument (and the scenario's name in
// MCP_CONFORMANCE_SCENARIO). The script starts gaggle over stdio with that URL as its one child, then does
// what the scenario expects of a client, through gaggle: gaggle's own client side is what gets judged.
//
//   node test/conformance/gaggle-client.mjs http://localhost:PORT/mcp
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { gaggleConfig } from "./gaggle-config.mjs";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

/** The project's own SDK 1.x (the root install), not the copy the conformance suite brings along. */
const rootSdk = (path) => import(pathToFileURL(join(ROOT, "node_modules/@modelcontextprotocol/sdk/dist/esm", path)).href);
const { Client } = await rootSdk("client/index.js");
const { StdioClientTransport } = await rootSdk("client/stdio.js");

/** What each scenario asks of the client, done through gaggle. */
const SCENARIOS = {
  initialize: async (client) => {
    await client.listTools();
  },
  tools_call: async (client) => {
    const { tools } = await client.listTools();
    if (!tools.some((tool) => tool.name === "add_numbers"))
      throw new Error(`gaggle lists no add_numbers tool (it lists: ${tools.map((t) => t.name).join(", ")})`);
    const result = await client.callTool({ name: "add_numbers", arguments: { a: 5, b: 3 } }, undefined, { timeout: 15_000 });
    if (result.isError) throw new Error(`add_numbers failed: ${JSON.stringify(result.content)}`);
  },
};

async function main() {
  const url = process.argv.at(-1);
  const scenario = process.env.MCP_CONFORMANCE_SCENARIO;
  const act = SCENARIOS[scenario];
  if (!url?.startsWith("http") || act === undefined) {
    throw new Error(`usage: gaggle-client.mjs URL, with MCP_CONFORMANCE_SCENARIO one of ${Object.keys(SCENARIOS).join(", ")} (got ${scenario})`);
  }
  const dir = mkdtempSync(join(tmpdir(), "gaggle-conformance-client-"));
  const config = join(dir, "children_config.toml");
  writeFileSync(config, gaggleConfig(['type = "http"', `url = ${JSON.stringify(url)}`]));
  const client = new Client({ name: "gaggle-conformance-client", version: "1.0.0" });
  const transport = new StdioClientTransport({ command: process.execPath, args: [join(ROOT, "dist/cli.js"), "--config", config], stderr: "inherit" });
  try {
    await client.connect(transport);
    await act(client);
  } finally {
    await client.close().catch(() => {});
    rmSync(dir, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (error) => {
    console.error(`gaggle-client: ${error?.message ?? error}`);
    process.exit(1);
  },
);
