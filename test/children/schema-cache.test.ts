import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { ToolListChangedNotificationSchema, type Tool } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import { SchemaCache } from "../../src/children/schema-cache.js";

/** The part of an SDK Client the cache uses: capabilities, tools/list answered when the test says, notification handlers. */
function fakeClient() {
  const handlers = new Map<unknown, () => void>();
  const answers: Array<(tools: Tool[]) => void> = [];
  const client = {
    getServerCapabilities: () => ({ tools: { listChanged: true } }),
    setNotificationHandler: (schema: unknown, handler: () => void) => handlers.set(schema, handler),
    listTools: () => new Promise<{ tools: Tool[] }>((resolve) => answers.push((tools) => resolve({ tools }))),
  };
  return {
    client: client as unknown as Client,
    answer: (names: string[]) => answers.shift()!(names.map((name) => ({ name, inputSchema: { type: "object" } }))),
    toolsChanged: () => handlers.get(ToolListChangedNotificationSchema)!(),
  };
}

describe("SchemaCache", () => {
  it("keeps the tool list it fetched, until the child says the list changed", async () => {
    const child = fakeClient();
    const changed: string[] = [];
    const cache = new SchemaCache(child.client, {}, (kind) => changed.push(kind));
    const first = cache.tools();
    child.answer(["a"]);
    expect((await first).map((tool) => tool.name)).toEqual(["a"]);
    expect(cache.cachedTools?.map((tool) => tool.name)).toEqual(["a"]);
    child.toolsChanged();
    expect(cache.cachedTools).toBeUndefined();
    expect(changed).toEqual(["tools"]);
  });

  it("never keeps a list whose fetch began before the child said the list changed", async () => {
    const child = fakeClient();
    const cache = new SchemaCache(child.client, {}, () => {});
    const stale = cache.tools();
    child.toolsChanged();
    child.answer(["old"]);
    await stale;
    expect(cache.cachedTools).toBeUndefined();
    const fresh = cache.tools();
    child.answer(["new"]);
    await fresh;
    expect(cache.cachedTools?.map((tool) => tool.name)).toEqual(["new"]);
  });
});
