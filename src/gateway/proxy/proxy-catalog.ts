// Proxy mode's view of the children: their tools and prompts under exposed names, and who owns which resource.
import { setTimeout as delay } from "node:timers/promises";
import type { Prompt, Resource, ResourceTemplate, Tool } from "@modelcontextprotocol/sdk/types.js";
import { CHANGED_WITH, type Child, type ChildSchema } from "../../children/child.js";
import type { Router } from "../../children/router.js";
import type { GaggleConfig } from "../../config/index.js";
import { logger } from "../../shared/log.js";
import { GaggleError } from "../../shared/errors.js";
import { exposedName, underPrefix } from "./exposed-names.js";
import { signInTool } from "./sign-in-tool.js";
import { likeliestOwner, listedOwner } from "./uri-owners.js";
import { INSTRUCTIONS, META_TOOLS, META_WORDING, SEARCH_TOOLS, SEARCH_WORDING, TOOL_LIST_WORDING, type Wording } from "../meta/meta-tools.js";

export interface Owned<T> {
  child: Child;
  item: T;
}

type Mode = GaggleConfig["gateway"]["expose"];

/** How one child's tools and prompts are offered: through the meta-tools, under exposed names, or both. */
export interface Exposure {
  mode: Mode;
  /** Exposed names are `<prefix>__<name>`; "" keeps the child's own names. */
  prefix: string;
  /** A built-in child: its tools are known without a run, and its resources are listed in every mode. */
  builtIn?: boolean;
}

/** How a list waits for children whose lists are not known yet, and who is told when one comes late. */
export interface ListWait {
  /** The longest a list waits for a child the catalog knows nothing of: gateway.list_wait_ms of the config in force, asked at each list. */
  ms(): number;
  /** A list came after the wait ended: clients are to be told that the list changed. */
  late(child: string, kind: "tools" | "resources" | "prompts"): void;
}

/**
 * Indexes are built on first use and dropped when a child says a list changed. A list known without starting
 * the child (a running session's, or the catalog's from its last run) is used as it is; a child known to nobody
 * is asked and waited for at most `wait.ms()` from the first list that asked for it, then left out until it answers. A child that cannot be reached is
 * left out of a listing (and logged) rather than failing the whole list.
 */
export class ProxyCatalog {
  private toolIndex: Promise<Map<string, Owned<Tool>>> | undefined;
  /** The tool index once built, with the promise it came from: current while that promise is `toolIndex`. */
  private builtTools: { from: Promise<Map<string, Owned<Tool>>>; index: Map<string, Owned<Tool>> } | undefined;
  private promptIndex: Promise<Map<string, Owned<Prompt>>> | undefined;
  /** The sign-in tool of each child that offers one (see offersSignIn), made once. */
  private readonly signInTools = new Map<string, Tool>();
  private readonly log = logger({ subsystem: "proxy" });
  /**
   * When the wait for a child ends, fixed by the first list that waited for it until the child answers: a client
   * asks for its tools, prompts and resources one after another, and the later lists must not each wait the whole
   * bound again.
   */
  private readonly waitsUntil = new WeakMap<Child, number>();
  /**
   * The meta-tools are listed unless every child is exposed as tools only, built-in ones included (so that a
   * child left out of the list stays reachable); follows the children (see reconfigure).
   */
  listsMetaTools = true;
  /** The meta-tools tools/list shows: all of them, none, or in search mode search_tools and execute_child_tool. */
  metaTools: Tool[] = META_TOOLS;
  /** How hints speak to clients: with the tools they list, and no other. */
  wording: Wording = META_WORDING;
  /** What a client is told at the start, in the same words. */
  instructions: string = INSTRUCTIONS.meta;

  /** `exposures` has an entry for every child of the router; `gatewayMode` is gateway.expose of the config in force. */
  constructor(
    private readonly router: Router,
    private exposures: ReadonlyMap<string, Exposure>,
    private gatewayMode: Mode,
    private readonly wait: ListWait = { ms: () => Infinity, late: () => {} },
  ) {
    this.derive();
  }

  /** The router's children changed (a reloaded config): how each is offered now, in the config in force. Every list is built anew. */
  reconfigure(exposures: ReadonlyMap<string, Exposure>, gatewayMode: Mode): void {
    this.exposures = exposures;
    this.gatewayMode = gatewayMode;
    this.derive();
    this.toolIndex = undefined;
    this.promptIndex = undefined;
  }

  private derive(): void {
    const gatewayMode = this.gatewayMode;
    this.listsMetaTools = gatewayMode !== "tools" || this.router.names().some((name) => this.modeOf(name) !== "tools");
    this.metaTools = gatewayMode === "search" ? SEARCH_TOOLS : this.listsMetaTools ? META_TOOLS : [];
    this.wording = gatewayMode === "search" ? SEARCH_WORDING : this.listsMetaTools ? META_WORDING : TOOL_LIST_WORDING;
    this.instructions = gatewayMode === "search" ? INSTRUCTIONS.search : this.listsMetaTools ? INSTRUCTIONS.meta : INSTRUCTIONS.tools;
  }

  /** Whether a child's tools and prompts are listed under exposed names (not in meta or search mode). */
  exposes(childName: string): boolean {
    const mode = this.modeOf(childName);
    return mode !== "meta" && mode !== "search";
  }

  /**
   * Whether a child's list of `kind` is part of what clients list. A built-in child's resources are gaggle's
   * own (process://list, goslings://list, team inboxes): listed in every mode, whatever its `expose`, since
   * listing them starts nothing; its tools and prompts, like a configured child's, only when it is exposed.
   */
  lists(childName: string, kind: "tools" | "resources" | "prompts"): boolean {
    return this.exposes(childName) || (kind === "resources" && this.isBuiltIn(childName)) || (kind === "tools" && this.offersSignIn(childName));
  }

  /**
   * Whether a sign-in tool stands in the tool list for the child while it needs a person to sign in: a remote
   * child whose tools are listed (proxy mode) or searched (search mode). In meta mode a call through
   * execute_child_tool asks for the sign-in itself.
   */
  offersSignIn(childName: string): boolean {
    return this.modeOf(childName) !== "meta" && this.router.canSignIn(childName);
  }

  /** Whether a resolved tool is a sign-in tool this catalog listed (see offersSignIn), not a child's own. */
  isSignInTool({ child, item }: Owned<Tool>): boolean {
    return this.signInTools.get(child.name) === item;
  }

  /** The name a child's sign-in tool is listed under while it needs a sign-in; undefined when it offers none. */
  signInToolName(childName: string): string | undefined {
    return [...this.signInEntries()].find(([, { child }]) => child.name === childName)?.[0];
  }

  /** A built-in child: its tools are known from the start, without a run to learn them. */
  isBuiltIn(childName: string): boolean {
    return this.exposureOf(childName).builtIn === true;
  }

  invalidate(kind: "tools" | "resources" | "prompts"): void {
    if (kind === "tools") this.toolIndex = undefined;
    if (kind === "prompts") this.promptIndex = undefined;
  }

  /** The exposed children's tools, and the sign-in tool of each child that needs a person to sign in. */
  async tools(): Promise<Tool[]> {
    const listed = [...(await this.tools_()).entries()].map(([name, { item }]) => ({ ...item, name }));
    const signIns = [...this.signInEntries()].filter(([, { child }]) => child.status().needsAuth);
    return [...listed, ...signIns.map(([name, { item }]) => ({ ...item, name }))];
  }

  /** The child's tool an exposed name stands for, when the current tool index is built and holds it: found without a wait. */
  builtTool(name: string): Owned<Tool> | undefined {
    const built = this.builtTools;
    return built !== undefined && built.from === this.toolIndex ? built.index.get(name) : undefined;
  }

  /** The exposed names of the tools in the index last built, and of the sign-in tools: for naming the nearest. */
  builtToolNames(): string[] {
    return [...(this.builtTools?.index.keys() ?? []), ...this.signInEntries().keys()];
  }

  /** The exposed children's tools once those not known yet have answered, waiting at most `ms`: for a client that lists once. */
  async toolsWaiting(ms: number): Promise<Tool[]> {
    await this.listUnlisted(ms);
    return this.tools();
  }

  /**
   * The tool an exposed name stands for: a child's own tool first, else a sign-in tool, whether or not the child
   * still needs it. A name in neither may be a tool of a child whose list was not there in time for it: a call,
   * unlike a list, waits for those children (each bounded by its own start timeout), then looks once more.
   */
  async resolveTool(name: string): Promise<Owned<Tool> | undefined> {
    const found = (await this.tools_()).get(name) ?? this.signInEntries().get(name);
    if (found) return found;
    return (await this.listUnlisted(Infinity)) ? (await this.tools_()).get(name) : undefined;
  }

  /** The exposed child whose prefix `name` carries while its tools are not known (it failed to start or to list): why a name is missing. */
  unlistedOwnerOf(name: string): Child | undefined {
    return this.exposedChildren().find((child) => child.known().tools === undefined && underPrefix(this.exposureOf(child.name).prefix, name));
  }

  /** Waits at most `ms` for exposed children whose tools are unknown (starting them), for the next index; false if none. */
  private async listUnlisted(ms: number): Promise<boolean> {
    const unlisted = this.exposedChildren().filter((child) => child.known().tools === undefined);
    if (unlisted.length === 0) return false;
    const listed = Promise.allSettled(unlisted.map((child) => child.tools()));
    // Unref: a list waiting out its bound must not keep a stopping gaggle alive.
    await (Number.isFinite(ms) ? Promise.race([listed, delay(ms, undefined, { ref: false })]) : listed);
    this.toolIndex = undefined;
    return true;
  }

  /** Each sign-in tool under its exposed name: `<prefix>__authenticate`, the child's name standing in for an empty prefix. */
  private signInEntries(): Map<string, Owned<Tool>> {
    const entries = new Map<string, Owned<Tool>>();
    for (const child of this.router.all()) {
      if (!this.offersSignIn(child.name)) continue;
      let item = this.signInTools.get(child.name);
      if (!item) this.signInTools.set(child.name, (item = signInTool(child.name)));
      entries.set(exposedName(this.exposureOf(child.name).prefix || child.name, item.name), { child, item });
    }
    return entries;
  }

  async prompts(): Promise<Prompt[]> {
    return [...(await this.prompts_()).entries()].map(([name, { item }]) => ({ ...item, name }));
  }

  async resolvePrompt(name: string): Promise<Owned<Prompt> | undefined> {
    return (await this.prompts_()).get(name);
  }

  /** Resources of exposed children and of built-in ones, URIs unchanged; the first child to list a URI owns it. */
  async resources(): Promise<Resource[]> {
    const lists = await this.gather(
      this.childrenListingResources(),
      this.listed("resources", async (child) => (await child.schema()).resources),
    );
    return unique(lists, (resource) => resource.uri).map(({ item }) => item);
  }

  async resourceTemplates(): Promise<ResourceTemplate[]> {
    const read = this.listed("resourceTemplates", async (child) => (await child.schema()).resourceTemplates);
    const lists = await this.gather(this.childrenListingResources(), read);
    return unique(lists, (template) => template.uriTemplate).map(({ item }) => item);
  }

  /**
   * The child that owns a resource URI: one that lists it, else one whose template matches it. Running
   * children are asked first, so routing a URI does not start every child. A URI nobody lists or templates
   * (one that does not exist, or a link a tool returned) goes to the child whose resources it is most like:
   * that child answers for it, a refusal included, as it would to a client of its own.
   */
  async resourceOwner(uri: string): Promise<Child | undefined> {
    const children = this.router.all();
    const running = new Set(children.filter((child) => child.status().state === "running"));
    const rest = children.filter((child) => !running.has(child));
    const asked: Owned<ChildSchema>[] = [];
    for (const group of [[...running], rest]) {
      const schemas = await this.gather(group, (child) => child.schema());
      const owner = listedOwner(uri, schemas);
      if (owner) return owner;
      asked.push(...schemas);
    }
    return likeliestOwner(uri, asked);
  }

  /** The child that owns a resource template, by its exact uriTemplate (completion references name it so). */
  async templateOwner(uriTemplate: string): Promise<Child | undefined> {
    const schemas = await this.gather(this.router.all(), (child) => child.schema());
    return schemas.find(({ item }) => item.resourceTemplates.some((template) => template.uriTemplate === uriTemplate))?.child;
  }

  /** A child that needs a person to sign in lists nothing of its own: its sign-in tool stands in (see tools()). */
  private tools_(): Promise<Map<string, Owned<Tool>>> {
    const own = (child: Child) =>
      child.tools().catch((error: unknown) => {
        if (error instanceof GaggleError && error.code === "AUTH_REQUIRED" && this.offersSignIn(child.name)) return [];
        throw error;
      });
    if (this.toolIndex) return this.toolIndex;
    const from = this.index("tool", this.listed("tools", own));
    this.toolIndex = from;
    from.then(
      (index) => (this.builtTools = { from, index }),
      () => {},
    );
    return from;
  }

  private prompts_(): Promise<Map<string, Owned<Prompt>>> {
    this.promptIndex ??= this.index(
      "prompt",
      this.listed("prompts", async (child) => (await child.schema()).prompts),
    );
    return this.promptIndex;
  }

  /**
   * A child's list of `kind`: as known, without starting the child, when it is; else fetched, waited for at
   * most `wait.ms()` (LATE when it did not come in time: clients are told once it does).
   */
  private listed<K extends keyof ChildSchema>(kind: K, fetch: (child: Child) => Promise<ChildSchema[K]>) {
    return async (child: Child): Promise<ChildSchema[K] | typeof LATE> => {
      const known = child.known()[kind];
      if (known) return known;
      const fetching = fetch(child);
      const ms = this.wait.ms();
      if (!Number.isFinite(ms)) return fetching;
      let timer: NodeJS.Timeout | undefined;
      let deadline = this.waitsUntil.get(child);
      if (deadline === undefined) {
        const until = Date.now() + ms;
        deadline = until;
        this.waitsUntil.set(child, until);
        // Once the child has answered (or failed), a later wait for it (after a sign-in, a restart) has its own bound.
        const done = () => {
          if (this.waitsUntil.get(child) === until) this.waitsUntil.delete(child);
        };
        fetching.then(done, done);
      }
      // Unref: a list waiting out its bound must not keep a stopping gaggle alive.
      const waited = new Promise<typeof LATE>((resolve) => (timer = setTimeout(resolve, Math.max(0, deadline - Date.now()), LATE).unref()));
      const first = await Promise.race([fetching, waited]).finally(() => clearTimeout(timer));
      if (first === LATE) {
        fetching.then(
          () => this.wait.late(child.name, CHANGED_WITH[kind]),
          () => {},
        );
      }
      return first;
    };
  }

  private async index<T extends { name: string }>(what: string, list: (child: Child) => Promise<T[] | typeof LATE>): Promise<Map<string, Owned<T>>> {
    const index = new Map<string, Owned<T>>();
    for (const { child, item: items } of await this.gather(this.exposedChildren(), list)) {
      const prefix = this.exposureOf(child.name).prefix;
      for (const item of items) {
        const name = exposedName(prefix, item.name);
        const taken = index.get(name);
        if (taken) {
          // Under its own key: `name` is the logger's, and a JSON line with two would lose one.
          this.log.error(
            { [what]: name, children: [taken.child.name, child.name] },
            `${what} name collision: "${name}" is exposed by both ${taken.child.name} and ${child.name}; set "prefix" on one of them`,
          );
          continue;
        }
        index.set(name, { child, item });
      }
    }
    return index;
  }

  private exposedChildren(): Child[] {
    return this.router.all().filter((child) => this.exposes(child.name));
  }

  private childrenListingResources(): Child[] {
    return this.router.all().filter((child) => this.lists(child.name, "resources"));
  }

  private modeOf(childName: string): Mode {
    return this.exposureOf(childName).mode;
  }

  private exposureOf(childName: string): Exposure {
    const exposure = this.exposures.get(childName);
    if (!exposure) throw new Error(`no exposure was given for the child ${childName}`);
    return exposure;
  }

  /** Runs `read` on every child at once, in child order, leaving out (and logging) the ones that fail, and the late ones. */
  private async gather<T>(children: Child[], read: (child: Child) => Promise<T | typeof LATE>): Promise<Owned<T>[]> {
    const settled = await Promise.allSettled(children.map(read));
    return settled.flatMap((outcome, i) => {
      const child = children[i]!;
      if (outcome.status === "fulfilled") return outcome.value === LATE ? [] : [{ child, item: outcome.value as T }];
      this.log.warn({ child: child.name, err: outcome.reason }, "child left out of the proxied lists");
      return [];
    });
  }
}

/** What a list gives for a child that did not answer within the wait. */
const LATE = Symbol("late");

function unique<T>(lists: Owned<T[]>[], key: (item: T) => string): Owned<T>[] {
  const seen = new Map<string, Owned<T>>();
  for (const { child, item: items } of lists) {
    for (const item of items) if (!seen.has(key(item))) seen.set(key(item), { child, item });
  }
  return [...seen.values()];
}
