// Ranked search over the children's tools (BM25 over weighted fields): what `search_tools` answers. Names are split
// the way tool names are written (snake_case, camelCase, kebab-case, dotted), so "list issues" finds list_issues
// and listIssues alike; a tool's name counts most, then its parameters' names, then the descriptions.
import type { Tool } from "@modelcontextprotocol/sdk/types.js";

export interface SearchableTool {
  serverId: string;
  tool: Tool;
}

export interface SearchHit {
  server_id: string;
  tool_name: string;
  /** The first line of the tool's description, cut at 200 characters. */
  description: string;
  input_schema: Tool["inputSchema"];
  score: number;
}

/** How much a word counts in each field of a tool. */
const WEIGHTS = { name: 3, server: 1, parameter: 2, description: 1 } as const;
const K1 = 1.2;
const B = 0.75;
const STOP_WORDS = new Set([
  "a",
  "an",
  "and",
  "are",
  "as",
  "at",
  "be",
  "by",
  "for",
  "from",
  "in",
  "into",
  "is",
  "it",
  "of",
  "on",
  "or",
  "the",
  "to",
  "with",
  "this",
  "that",
  "its",
]);

/** The words of `text`, lower case: split at every non-letter-or-digit and at camelCase humps; plurals folded. */
export function words(text: string): string[] {
  return text
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .replace(/([A-Z]+)([A-Z][a-z])/g, "$1 $2")
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((word) => word.length > 1 && !STOP_WORDS.has(word))
    .map(fold);
}

/**
 * Words a person uses for what tool names and descriptions mostly call otherwise, each folded into the tools'
 * word: "make a new folder" finds create_directory.
 */
const SAME_AS = new Map([
  ["folder", "directory"],
  ["dir", "directory"],
  ["remove", "delete"],
  ["erase", "delete"],
  ["make", "create"],
  ["fetch", "get"],
  ["retrieve", "get"],
]);

/** A crude stemmer, enough to meet "issues" with "issue" and "files" with "file"; then SAME_AS. */
function fold(word: string): string {
  let stem = word;
  if (word.length > 4 && word.endsWith("ies")) stem = `${word.slice(0, -3)}y`;
  else if (word.length > 3 && word.endsWith("s") && !word.endsWith("ss")) stem = word.slice(0, -1);
  return SAME_AS.get(stem) ?? stem;
}

interface Document {
  entry: SearchableTool;
  frequencies: Map<string, number>;
  length: number;
}

export class ToolSearch {
  private readonly documents: Document[];
  private readonly documentFrequency = new Map<string, number>();
  private readonly averageLength: number;

  constructor(entries: SearchableTool[]) {
    this.documents = entries.map((entry) => documentOf(entry));
    for (const { frequencies } of this.documents) {
      for (const word of frequencies.keys()) this.documentFrequency.set(word, (this.documentFrequency.get(word) ?? 0) + 1);
    }
    this.averageLength = this.documents.reduce((sum, doc) => sum + doc.length, 0) / Math.max(1, this.documents.length);
  }

  /** The best `limit` hits for `query`, best first; only tools of `serverId` when it is given. */
  search(query: string, options: { serverId?: string | undefined; limit: number }): SearchHit[] {
    const asked = [...new Set(words(query))];
    const count = this.documents.length;
    const scored: Array<{ doc: Document; score: number }> = [];
    for (const doc of this.documents) {
      if (options.serverId !== undefined && doc.entry.serverId !== options.serverId) continue;
      let score = 0;
      for (const word of asked) {
        const frequency = doc.frequencies.get(word);
        if (!frequency) continue;
        const containing = this.documentFrequency.get(word)!;
        const idf = Math.log(1 + (count - containing + 0.5) / (containing + 0.5));
        score += (idf * frequency * (K1 + 1)) / (frequency + K1 * (1 - B + (B * doc.length) / this.averageLength));
      }
      if (score > 0) scored.push({ doc, score });
    }
    scored.sort((a, b) => b.score - a.score || a.doc.entry.tool.name.localeCompare(b.doc.entry.tool.name));
    return scored.slice(0, options.limit).map(({ doc, score }) => hit(doc.entry, score));
  }
}

/**
 * A tool's words are counted once per tool object: the lists a search runs over (a session's cache, the catalog)
 * hand out the same objects until they change, so a search rebuilds only the ranking, not the documents.
 */
const counted = new WeakMap<Tool, Map<string, Document>>();

function documentOf(entry: SearchableTool): Document {
  let byServer = counted.get(entry.tool);
  if (!byServer) counted.set(entry.tool, (byServer = new Map()));
  let doc = byServer.get(entry.serverId);
  if (!doc) byServer.set(entry.serverId, (doc = document(entry)));
  return doc;
}

function document(entry: SearchableTool): Document {
  const { tool, serverId } = entry;
  const frequencies = new Map<string, number>();
  let length = 0;
  const add = (text: string | undefined, weight: number) => {
    for (const word of words(text ?? "")) {
      frequencies.set(word, (frequencies.get(word) ?? 0) + weight);
      length += weight;
    }
  };
  add(tool.name, WEIGHTS.name);
  add(tool.title, WEIGHTS.name);
  add(serverId, WEIGHTS.server);
  add(tool.description, WEIGHTS.description);
  const properties = (tool.inputSchema.properties ?? {}) as Record<string, { description?: unknown }>;
  for (const [name, schema] of Object.entries(properties)) {
    add(name, WEIGHTS.parameter);
    if (typeof schema?.description === "string") add(schema.description, WEIGHTS.description);
  }
  return { entry, frequencies, length };
}

function hit({ serverId, tool }: SearchableTool, score: number): SearchHit {
  const [firstLine = ""] = (tool.description ?? "").trim().split("\n");
  return {
    server_id: serverId,
    tool_name: tool.name,
    description: firstLine.length > 200 ? `${firstLine.slice(0, 199)}…` : firstLine,
    input_schema: tool.inputSchema,
    score: Math.round(score * 1000) / 1000,
  };
}
