// One session's cached lists (tools, resources, templates, prompts): fetched once, dropped on list_changed.
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { RequestOptions } from "@modelcontextprotocol/sdk/shared/protocol.js";
import {
  PromptListChangedNotificationSchema,
  ResourceListChangedNotificationSchema,
  ToolListChangedNotificationSchema,
  type Prompt,
  type Resource,
  type ResourceTemplate,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";
import { CHANGED_WITH, type ChildSchema, type ListKind } from "./child.js";

/** What a list_changed notification names: resource templates change with resources. */
type ChangedKind = (typeof CHANGED_WITH)[ListKind];
type Lists = ChildSchema;

export class SchemaCache {
  private readonly pending = new Map<ListKind, Promise<unknown[]>>();
  private known: Tool[] | undefined;
  /** Counts tools/list_changed notifications, so that a fetch that began before one never becomes `known`. */
  private toolsChanges = 0;

  /** `onChanged` runs after a list was dropped because the child said it changed; `onListed` after a list was fetched whole. */
  constructor(
    private readonly client: Client,
    private readonly options: RequestOptions,
    onChanged: (kind: ChangedKind) => void,
    private readonly onListed: <K extends ListKind>(kind: K, items: Lists[K]) => void = () => {},
  ) {
    const drop = (changed: ChangedKind) => () => {
      this.pending.delete(changed);
      if (changed === "resources") this.pending.delete("resourceTemplates");
      if (changed === "tools") {
        this.known = undefined;
        this.toolsChanges++;
      }
      onChanged(changed);
    };
    client.setNotificationHandler(ToolListChangedNotificationSchema, drop("tools"));
    client.setNotificationHandler(ResourceListChangedNotificationSchema, drop("resources"));
    client.setNotificationHandler(PromptListChangedNotificationSchema, drop("prompts"));
  }

  /** The tool list if it has been fetched, without fetching it. */
  get cachedTools(): Tool[] | undefined {
    return this.known;
  }

  async tools(): Promise<Tool[]> {
    const changes = this.toolsChanges;
    const tools = await this.list("tools", async (cursor) => {
      const page = await this.client.listTools({ cursor }, this.options);
      return { items: page.tools, next: page.nextCursor };
    });
    if (changes === this.toolsChanges) this.known = tools;
    return tools;
  }

  resources(): Promise<Resource[]> {
    return this.list("resources", async (cursor) => {
      const page = await this.client.listResources({ cursor }, this.options);
      return { items: page.resources, next: page.nextCursor };
    });
  }

  resourceTemplates(): Promise<ResourceTemplate[]> {
    return this.list("resourceTemplates", async (cursor) => {
      const page = await this.client.listResourceTemplates({ cursor }, this.options);
      return { items: page.resourceTemplates, next: page.nextCursor };
    });
  }

  prompts(): Promise<Prompt[]> {
    return this.list("prompts", async (cursor) => {
      const page = await this.client.listPrompts({ cursor }, this.options);
      return { items: page.prompts, next: page.nextCursor };
    });
  }

  async all(): Promise<Lists> {
    const [tools, resources, resourceTemplates, prompts] = await Promise.all([
      this.tools(),
      this.resources(),
      this.resourceTemplates(),
      this.prompts(),
    ]);
    return { tools, resources, resourceTemplates, prompts };
  }

  /** Follows pagination to the end; a child that lacks the capability has an empty list. */
  private list<K extends ListKind>(
    kind: K,
    fetchPage: (cursor: string | undefined) => Promise<{ items: Lists[K]; next: string | undefined }>,
  ): Promise<Lists[K]> {
    const capability = CHANGED_WITH[kind];
    if (!this.client.getServerCapabilities()?.[capability]) {
      this.onListed(kind, [] as Lists[K]);
      return Promise.resolve([] as Lists[K]);
    }
    let pending = this.pending.get(kind) as Promise<Lists[K]> | undefined;
    if (!pending) {
      pending = (async () => {
        const all: Lists[K][number][] = [];
        let cursor: string | undefined;
        do {
          const page = await fetchPage(cursor);
          all.push(...page.items);
          cursor = page.next;
        } while (cursor);
        this.onListed(kind, all as Lists[K]);
        return all as Lists[K];
      })();
      // A failed fetch is not cached: the next caller tries again.
      const fetched = pending;
      fetched.catch(() => {
        if (this.pending.get(kind) === fetched) this.pending.delete(kind);
      });
      this.pending.set(kind, fetched);
    }
    return pending;
  }
}
