// search_tools' latency over a catalog of 2,000 tools, as the meta-tool runs it: the ranking is built from the
// children's known tools on every call (each tool's words are counted once, while its list stays the same), then
// queried. Prints p50 and p95 per call in ms, with the machine.
//
//   node bench/search.mjs        (npm run bench builds dist/ first)
import { cpus } from "node:os";
import { performance } from "node:perf_hooks";
import { ToolSearch } from "../dist/gateway/meta/tool-search.js";

const VERBS = [
  "list",
  "get",
  "create",
  "update",
  "delete",
  "search",
  "read",
  "write",
  "move",
  "sync",
  "export",
  "import",
  "run",
  "stop",
  "watch",
  "merge",
  "close",
  "open",
  "tag",
  "label",
];
const NOUNS = [
  "issue",
  "pull_request",
  "file",
  "directory",
  "branch",
  "commit",
  "user",
  "team",
  "project",
  "ticket",
  "page",
  "database",
  "table",
  "row",
  "query",
  "image",
  "bucket",
  "object",
  "event",
  "alert",
  "metric",
  "dashboard",
  "invoice",
  "payment",
  "customer",
];
const SERVERS = ["github", "gitlab", "jira", "linear", "notion", "postgres", "s3", "sentry", "grafana", "stripe"];
const QUERIES = [
  "list open issues in a repository",
  "read a file",
  "create a payment for a customer",
  "search pages in the wiki",
  "delete a bucket object",
  "show dashboard metrics",
  "merge a pull request",
  "export database table rows",
];

const entries = [];
for (const serverId of SERVERS) {
  for (const verb of VERBS) {
    for (const noun of NOUNS.slice(0, 10)) {
      const name = `${verb}_${noun}`;
      entries.push({
        serverId,
        tool: {
          name,
          description: `${verb[0].toUpperCase()}${verb.slice(1)} a ${noun.replaceAll("_", " ")} in ${serverId}. Returns the ${noun.replaceAll("_", " ")} as JSON.`,
          inputSchema: {
            type: "object",
            properties: { id: { description: `The ${noun} id` }, filter: { description: "Optional filter expression" }, limit: {} },
          },
        },
      });
    }
  }
}

const samples = [];
for (let round = 0; round < 50; round++) {
  for (const query of QUERIES) {
    const began = performance.now();
    new ToolSearch(entries).search(query, { limit: 10 });
    samples.push(performance.now() - began);
  }
}
samples.sort((a, b) => a - b);
const at = (q) => samples[Math.min(samples.length - 1, Math.floor(q * samples.length))].toFixed(2);
process.stdout.write(
  `search_tools over ${entries.length} tools: p50 ${at(0.5)} ms, p95 ${at(0.95)} ms per call (ranking built each call; ${samples.length} calls; ${cpus()[0]?.model ?? "unknown CPU"})\n`,
);
