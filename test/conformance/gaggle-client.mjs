#!/usr/bin/env node
// gaggle as the client under test in the conformance suite's client scenarios. The suite starts a mock MCP
// server and runs this script with the mock's URL as the last argument (and the scenario's name in
// MCP_CONFORMANCE_SCENARIO). The script starts gaggle over stdio with that URL as its one child, then does
// what the scenario expects of a client, through gaggle: gaggle's own client side is what gets judged.
//
//   node test/conformance/gaggle-client.mjs http://localhost:PORT/mcp
import { spawn } from "node:child_process";
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
const { ElicitRequestSchema } = await rootSdk("types.js");

/** Answers every form gaggle relays from the child: accepted, with `content`. */
function acceptForms(client, content = {}) {
  client.setRequestHandler(ElicitRequestSchema, () => ({ action: "accept", content }));
}

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
  // The child asks for a form whose fields all have defaults; the client (this script, with the SDK's
  // applyDefaults) accepts it empty and the defaults are filled in on the way back.
  "elicitation-sep1034-client-defaults": async (client) => {
    acceptForms(client);
    await call(client, "test_client_elicitation_defaults");
  },
  // The child's response stream closes before the result, with a retry interval: gaggle's transport reconnects.
  "sse-retry": async (client) => {
    await call(client, "test_reconnection");
  },
  // Every request gaggle sends carries the envelope and the version header, also after a version refusal.
  "request-metadata": async (client) => {
    await client.listTools();
    await client.listTools();
  },
  // The child's input_required rounds: gaggle asks this client, then retries with the child's requestState.
  "sep-2322-client-request-state": async (client) => {
    acceptForms(client, { confirmed: true });
    await call(client, "test_mrtr_echo_state");
    await call(client, "test_mrtr_unrelated");
    await call(client, "test_mrtr_no_state");
    await call(client, "test_mrtr_no_result_type");
  },
  "http-standard-headers": async (client) => {
    await call(client, "test_headers");
  },
  // Parameters marked x-mcp-header travel as Mcp-Param-* headers too: the calls come from the scenario's context.
  "http-custom-headers": async (client) => {
    await client.listTools();
    const { toolCalls } = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT ?? "{}");
    for (const { name, arguments: args } of toolCalls ?? []) await call(client, name, args);
  },
  // Tools whose x-mcp-header annotations break the rules are left out of gaggle's list; the valid one is called.
  "http-invalid-tool-headers": async (client) => {
    const { tools } = await client.listTools();
    const listed = tools.map((tool) => tool.name).filter((name) => name !== "valid_tool");
    if (listed.length > 0) throw new Error(`gaggle lists tools with invalid x-mcp-header annotations: ${listed.join(", ")}`);
    await call(client, "valid_tool", { region: "us-west1" });
  },
  // Listing a tool whose schema names a network $ref must not make gaggle fetch it.
  "json-schema-ref-no-deref": async (client) => {
    await client.listTools();
  },
};

/** Calls a tool of the child through gaggle; a failure is thrown with what gaggle answered. */
async function call(client, name, args = {}) {
  const result = await client.callTool({ name, arguments: args }, undefined, { timeout: 15_000 });
  if (result.isError) throw new Error(`${name} failed: ${JSON.stringify(result.content)}`);
  return result;
}

/**
 * Every auth/* scenario: once signed in, the client lists the child's tools and calls each (the mock offers one or
 * none), through the meta-tools: unlike a proxy-mode tools/list, which lists what it can, they fail with the cause.
 * When gaggle answers AUTH_REQUIRED (a call needs more scopes than the sign-in granted, or the child moved to
 * another authorization server), the person signs in again as its hint says and the client tries once more:
 * at most three sign-ins in all.
 */
async function signedInUse(client, signInAgain) {
  let signIns = 1;
  const meta = async (name, args) => {
    const result = await call(client, name, args);
    return result.structuredContent ?? JSON.parse(result.content[0].text);
  };
  const retried = async (act) => {
    for (;;) {
      try {
        return await act();
      } catch (error) {
        if (!String(error?.message).includes("AUTH_REQUIRED") || signIns >= 3) throw error;
        signIns++;
        await signInAgain();
      }
    }
  };
  const { tools } = await retried(() => meta("get_schema", { server_id: "child" }));
  for (const tool of tools) await retried(() => call(client, "execute_child_tool", { server_id: "child", tool_name: tool.name, arguments: {} }));
}

/**
 * Signs gaggle in to the scenario's server as a person would: `gaggle auth login child` prints the authorization
 * URL; this script plays the browser, following the authorization server's redirect to gaggle's loopback listener.
 */
async function signIn(config, env) {
  const login = spawn(process.execPath, [join(ROOT, "dist/cli.js"), "auth", "login", "child", "--config", config], {
    env,
    stdio: ["ignore", "pipe", "inherit"],
  });
  let output = "";
  const exited = new Promise((resolve) => login.once("exit", resolve));
  const authorizationUrl = await new Promise((resolve, reject) => {
    login.stdout.on("data", (chunk) => {
      output += chunk;
      process.stderr.write(chunk);
      const match = /^\s+(https?:\/\/\S+)$/m.exec(output);
      if (match) resolve(match[1]);
    });
    exited.then((code) => reject(new Error(`gaggle auth login exited (code ${code}) before printing a URL:\n${output}`)));
  });
  let next = authorizationUrl;
  for (let hop = 0; hop < 5 && next; hop++) {
    const response = await fetch(next, { redirect: "manual" });
    next = response.status >= 300 && response.status < 400 ? new URL(response.headers.get("location"), next).href : undefined;
  }
  const code = await exited;
  if (code !== 0) throw new Error(`gaggle auth login failed (code ${code}):\n${output}`);
}

/** The scenarios where gaggle gets its tokens with no person involved, and the grant it uses. */
const UNATTENDED = {
  "auth/client-credentials-basic": "client_credentials",
  "auth/client-credentials-jwt": "client_credentials",
  "auth/enterprise-managed-authorization": "enterprise",
};

/**
 * The child's oauth table: the client the scenario pre-registered for gaggle when its context names one (with a
 * secret or a private key for the client credentials grant, or the identity provider of the enterprise grant),
 * and always the client metadata document URL the suite's authorization servers know (used where one supports
 * such documents, as the reference client does).
 */
function oauthLines() {
  const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT ?? "{}");
  const toml = (key, value) => (value === undefined ? [] : [`${key} = ${JSON.stringify(value)}`]);
  return [
    "",
    "[mcp_servers.child.oauth]",
    'client_metadata_url = "https://conformance-test.local/client-metadata.json"',
    ...toml("client_id", context.client_id),
    ...toml("client_secret", context.client_secret),
    ...toml("private_key", context.private_key_pem),
    ...toml("signing_alg", context.signing_algorithm),
    ...toml("idp_token_endpoint", context.idp_token_endpoint),
    ...toml("idp_client_id", context.idp_client_id),
    ...toml("id_token", context.idp_id_token),
    ...toml("grant", UNATTENDED[context.name]),
  ];
}

async function main() {
  const url = process.argv.at(-1);
  const scenario = process.env.MCP_CONFORMANCE_SCENARIO;
  const act = scenario?.startsWith("auth/") ? signedInUse : SCENARIOS[scenario];
  if (!url?.startsWith("http") || act === undefined) {
    throw new Error(`usage: gaggle-client.mjs URL, with MCP_CONFORMANCE_SCENARIO one of ${Object.keys(SCENARIOS).join(", ")} (got ${scenario})`);
  }
  const dir = mkdtempSync(join(tmpdir(), "gaggle-conformance-client-"));
  const config = join(dir, "children_config.toml");
  const childLines = ['type = "http"', `url = ${JSON.stringify(url)}`, ...(scenario.startsWith("auth/") ? oauthLines() : [])];
  writeFileSync(config, gaggleConfig(childLines, scenario.startsWith("auth/") ? "meta" : "tools"));
  const capabilities = { elicitation: { form: { applyDefaults: true } } };
  const client = new Client({ name: "gaggle-conformance-client", version: "1.0.0" }, { capabilities });
  const env = { ...process.env, XDG_STATE_HOME: join(dir, "state") };
  const transport = new StdioClientTransport({
    command: process.execPath,
    // One gaggle of its own per scenario, not the daemon: the scenario's child is a server only it knows.
    args: [join(ROOT, "dist/cli.js"), "--config", config, "--standalone"],
    env,
    stderr: "inherit",
  });
  try {
    if (scenario.startsWith("auth/") && !UNATTENDED[scenario]) await signIn(config, env);
    await client.connect(transport);
    await act(client, () => signIn(config, env));
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
