// search_tools' ranking: words split as tool names are written, the name counting most, plurals folded.
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import { ToolSearch, words } from "../../../src/gateway/meta/tool-search.js";

const tool = (name: string, description: string, properties: Record<string, { description?: string }> = {}): Tool => ({
  name,
  description,
  inputSchema: { type: "object", properties },
});

const CORPUS = [
  {
    serverId: "github",
    tool: tool("list_issues", "List issues in a GitHub repository.", { owner: {}, repo: {}, state: { description: "open or closed" } }),
  },
  { serverId: "github", tool: tool("create_pull_request", "Open a new pull request.", { title: {}, body: {}, head: {}, base: {} }) },
  { serverId: "github", tool: tool("searchCode", "Search code across repositories.", { query: { description: "GitHub code search syntax" } }) },
  { serverId: "filesystem", tool: tool("read_text_file", "Read the complete contents of a file as text.", { path: {} }) },
  { serverId: "filesystem", tool: tool("list_directory", "Get a detailed listing of all files and directories in a path.", { path: {} }) },
  { serverId: "filesystem", tool: tool("write_file", "Create a new file or overwrite an existing file.", { path: {}, content: {} }) },
  { serverId: "memory", tool: tool("create_entities", "Create multiple new entities in the knowledge graph.", { entities: {} }) },
  { serverId: "everything", tool: tool("get-sum", "Returns the sum of two numbers.", { a: {}, b: {} }) },
];

describe("words", () => {
  it("splits snake_case, camelCase, kebab-case and acronyms, in lower case, without stop words, plurals folded", () => {
    expect(words("list_issues")).toEqual(["list", "issue"]);
    expect(words("searchCode")).toEqual(["search", "code"]);
    expect(words("get-sum")).toEqual(["get", "sum"]);
    expect(words("parseHTTPHeaders")).toEqual(["parse", "http", "header"]);
    expect(words("Read the contents of a file")).toEqual(["read", "content", "file"]);
  });

  it("folds a person's words into the ones tools use: folder is directory, make is create, remove is delete", () => {
    expect(words("make a new folder")).toEqual(["create", "new", "directory"]);
    expect(words("remove the folders")).toEqual(["delete", "directory"]);
    expect(words("fetchIssue")).toEqual(["get", "issue"]);
  });
});

describe("ToolSearch", () => {
  const search = new ToolSearch(CORPUS);
  const top = (query: string, serverId?: string) => search.search(query, { serverId, limit: 3 }).map((hit) => `${hit.server_id}/${hit.tool_name}`);

  it("ranks first the tool that does what a task asks", () => {
    expect(top("show me the open issues of a repo")[0]).toBe("github/list_issues");
    expect(top("read a file")[0]).toBe("filesystem/read_text_file");
    expect(top("add two numbers together")[0]).toBe("everything/get-sum");
    expect(top("open a pull request")[0]).toBe("github/create_pull_request");
    expect(top("search code")[0]).toBe("github/searchCode");
    expect(top("what files are in this folder directory")[0]).toBe("filesystem/list_directory");
  });

  it("keeps to one server when asked, and to the limit", () => {
    expect(top("create", "memory")).toEqual(["memory/create_entities"]);
    expect(search.search("file", { limit: 2 })).toHaveLength(2);
  });

  it("gives each hit what execute_child_tool needs, and nothing for words no tool has", () => {
    const [hit] = search.search("sum", { limit: 1 });
    expect(hit).toEqual({
      server_id: "everything",
      tool_name: "get-sum",
      description: "Returns the sum of two numbers.",
      input_schema: { type: "object", properties: { a: {}, b: {} } },
      score: expect.any(Number),
    });
    expect(search.search("kubernetes", { limit: 5 })).toEqual([]);
  });
});
