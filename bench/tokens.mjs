// What a client's model reads, counted in tokens with a real tokenizer (gpt-tokenizer, o200k_base), and how well
// search_tools finds the tool for a task. gaggle fronts real servers from npm (server-everything,
// server-filesystem, server-memory) and is asked, in each of its modes, for the tool list a client sees; then
// search_tools is asked each task of TASKS, and recall at 1 and at 5 is the share of tasks whose tool is first,
// or among the first five.
//
//   node bench/tokens.mjs        (npm run bench builds dist/ first)
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { countTokens } from "gpt-tokenizer";
import { Endpoint, GAGGLE_CLI, ROOT, makeTempDir, removeDir } from "./procs.mjs";

const SERVERS = {
  everything: ["@modelcontextprotocol/server-everything/dist/index.js", "stdio"],
  filesystem: ["@modelcontextprotocol/server-filesystem/dist/index.js", ROOT],
  memory: ["@modelcontextprotocol/server-memory/dist/index.js"],
};

/** A task in a user's words, and the tool that does it. */
const TASKS = [
  ["repeat back the message I give you", "everything", "echo"],
  ["add two numbers together", "everything", "get-sum"],
  ["show the environment variables the server runs with", "everything", "get-env"],
  ["return a small logo image", "everything", "get-tiny-image"],
  ["compress a file with gzip", "everything", "gzip-file-as-resource"],
  ["run a long operation that reports its progress", "everything", "trigger-long-running-operation"],
  ["turn random log messages on", "everything", "toggle-simulated-logging"],
  ["research a topic in depth and summarise the findings", "everything", "simulate-research-query"],
  ["return structured content that follows an output schema", "everything", "get-structured-content"],
  ["give me links to several resources", "everything", "get-resource-links"],
  ["read the text of a file", "filesystem", "read_text_file"],
  ["read several files at once", "filesystem", "read_multiple_files"],
  ["overwrite a file with new content", "filesystem", "write_file"],
  ["replace some lines in a text file", "filesystem", "edit_file"],
  ["make a new folder", "filesystem", "create_directory"],
  ["list the files in a directory", "filesystem", "list_directory"],
  ["list the files in a directory with their sizes", "filesystem", "list_directory_with_sizes"],
  ["show a recursive tree of a directory", "filesystem", "directory_tree"],
  ["rename a file", "filesystem", "move_file"],
  ["find files whose names match a glob pattern", "filesystem", "search_files"],
  ["get the size and modification time of a file", "filesystem", "get_file_info"],
  ["which directories may the server access", "filesystem", "list_allowed_directories"],
  ["read an image file and return it as base64", "filesystem", "read_media_file"],
  ["create new entities in the knowledge graph", "memory", "create_entities"],
  ["connect two entities with a relation", "memory", "create_relations"],
  ["add observations about an entity", "memory", "add_observations"],
  ["remove an entity from the knowledge graph", "memory", "delete_entities"],
  ["read the whole knowledge graph", "memory", "read_graph"],
  ["search the knowledge graph for nodes matching a query", "memory", "search_nodes"],
  ["open nodes by their names", "memory", "open_nodes"],
];

const dir = makeTempDir();

function config(expose) {
  const lines = ["[gateway]", `expose = "${expose}"`, 'log_level = "warn"', ""];
  for (const virtual of ["process", "goose", "team"]) lines.push(`[virtual.${virtual}]`, "enabled = false", "");
  for (const [name, [script, ...args]] of Object.entries(SERVERS)) {
    const path = join(ROOT, "node_modules", script);
    lines.push(`[mcp_servers.${name}]`, `command = ${JSON.stringify(process.execPath)}`, `args = ${JSON.stringify([path, ...args])}`);
    lines.push(`cwd = ${JSON.stringify(dir)}`, `env = { MEMORY_FILE_PATH = ${JSON.stringify(join(dir, "memory.jsonl"))} }`, "");
  }
  const file = join(dir, `${expose}.toml`);
  writeFileSync(file, lines.join("\n"));
  return file;
}

async function gaggle(expose) {
  return Endpoint.start(`gaggle (${expose})`, process.execPath, [GAGGLE_CLI, "--config", config(expose)]);
}

const tokensOf = (value) => countTokens(JSON.stringify(value));

/** The tool list a client sees in each mode; proxy mode's is whole only once every child has listed. */
async function listsByMode() {
  const sizes = {};
  for (const expose of ["tools", "meta", "search"]) {
    const endpoint = await gaggle(expose);
    try {
      // Meta and search modes start no child to list; proxy mode starts them all, and lists them once known.
      if (expose === "tools")
        for (const name of Object.keys(SERVERS))
          await endpoint.client.callTool({ name: "get_schema", arguments: { server_id: name } }).catch(() => {});
      const list = await endpoint.client.listTools();
      sizes[expose] = { tools: list.tools.length, tokens: tokensOf(list) };
    } finally {
      await endpoint.close();
    }
  }
  return sizes;
}

async function search() {
  const endpoint = await gaggle("search");
  try {
    // search_tools searches what the catalog knows: each child runs once so that its tools are known.
    for (const name of Object.keys(SERVERS))
      await endpoint.client.callTool({ name: "execute_child_tool", arguments: { server_id: name, tool_name: "-", arguments: {} } });
    const ranks = [];
    const answerTokens = [];
    for (const [task, server, tool] of TASKS) {
      const result = await endpoint.client.callTool({ name: "search_tools", arguments: { query: task, limit: 5 } });
      const { hits, not_searched: notSearched } = JSON.parse(result.content[0].text);
      if (notSearched) throw new Error(`search_tools did not search ${notSearched.children.join(", ")}`);
      answerTokens.push(tokensOf(result));
      const rank = hits.findIndex((hit) => hit.server_id === server && hit.tool_name === tool);
      ranks.push({ task, tool, rank: rank === -1 ? undefined : rank + 1, first: `${hits[0]?.server_id}/${hits[0]?.tool_name}` });
    }
    return { ranks, answerTokens };
  } finally {
    await endpoint.close();
  }
}

try {
  mkdirSync(join(dir, "state"));
  process.env.XDG_STATE_HOME = join(dir, "state");
  const sizes = await listsByMode();
  const { ranks, answerTokens } = await search();
  const at = (k) => ranks.filter((r) => r.rank !== undefined && r.rank <= k).length / ranks.length;
  const median = [...answerTokens].sort((a, b) => a - b)[Math.floor(answerTokens.length / 2)];
  const lines = [
    `tokens and search quality (bench/tokens.mjs), gpt-tokenizer o200k_base, servers: ${Object.keys(SERVERS).join(", ")}`,
    ...Object.entries(sizes).map(
      ([mode, { tools, tokens }]) => `  tools/list in ${mode === "tools" ? "proxy" : mode} mode: ${tools} tools, ${tokens} tokens`,
    ),
    `  a search_tools answer (limit 5): median ${median} tokens`,
    `  recall over ${ranks.length} tasks: at 1 ${(at(1) * 100).toFixed(0)}%, at 5 ${(at(5) * 100).toFixed(0)}%`,
    ...ranks
      .filter((r) => r.rank !== 1)
      .map((r) => `    "${r.task}": ${r.tool} ${r.rank ? `ranked ${r.rank}` : "not in the first 5"}, first was ${r.first}`),
  ];
  process.stdout.write(`${lines.join("\n")}\n`);
} finally {
  removeDir(dir);
}
