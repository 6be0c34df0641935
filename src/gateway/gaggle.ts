// Assembles a running gateway core from a loaded config: the children, their router, and the client-facing hub.
import { BothEras } from "../children/both-eras.js";
import type { Child, CloseReason } from "../children/child.js";
import { McpChild, type McpChildOptions } from "../children/mcp-child.js";
import type { UrlOpener } from "../children/child.js";
import { setReaperGrace } from "../children/processes/reaper.js";
import { withholdFromChildren } from "../children/processes/child-env.js";
import { Router, type RoutedChild } from "../children/router.js";
import { Switchboard } from "../children/switchboard.js";
import { bearerTokens, configSecrets, makeStateDir, stateDir, VIRTUAL_CHILD_NAMES, type ChildConfig, type GaggleConfig } from "../config/index.js";
import { ProxyCatalog, type Exposure } from "./proxy/proxy-catalog.js";
import { MemberRegistry } from "./members.js";
import { SessionHub } from "./session-hub.js";
import { BuiltInChildren, virtualSettingsProblems } from "../virtual/index.js";
import { VirtualChild } from "../virtual/virtual-child.js";
import type { Observer } from "../shared/observer.js";
import { GaggleError } from "../shared/errors.js";
import { lazyLogger } from "../shared/log.js";
import { withStack } from "../shared/log-errors.js";

/** Bound on first use, after the log level is set. */
const log = lazyLogger({ subsystem: "gateway" });

export interface Gaggle {
  /** The config the children follow: the one loaded last (see reload). */
  readonly config: GaggleConfig;
  readonly router: Router;
  /** Every connected client; it hears what children report on the switchboard. */
  readonly hub: SessionHub;
  /** Proxy mode's exposed names and resource owners. */
  readonly catalog: ProxyCatalog;
  /** Secrets of the team members gaggle's agents speak as, and the URLs they connect back on. */
  readonly members: MemberRegistry;
  /** What the call path reports its requests to; none when nothing observes gaggle. */
  readonly observer: Observer | undefined;
  /** Why the config file is not the config in force (an edit, or the file at start, that did not load); each a line. */
  configErrors(): string[];
  /** Starts the children configured with `startup = "eager"`, in the background. */
  startEager(): void;
  /**
   * Follows an edited config: children added start per their `startup`, removed ones are closed, changed ones
   * (any field) are closed and replaced, unchanged ones are not touched; clients hear one list_changed per kind.
   * `inPlace` names gateway keys otherwise taken only at start that the config in force takes from `next` this
   * once, for want of any worth keeping (gaggle started on a file that did not load): the core applies its own
   * (`shutdownGraceMs`, to the children started from then on), the serving layer the others, told through `inForce`.
   */
  reload(next: GaggleConfig, inPlace?: readonly GatewayKey[]): Promise<Reloaded>;
  /**
   * `principal` is let in no more (its token left the config): what it started in the built-in children, and what the
   * members of the teams it leads started, would run on with nobody able to see or stop it, so each child stops it.
   * A child whose state every client shares has nothing of one principal's to stop. Resolves once stopped; never rejects.
   */
  principalGone(principal: string): Promise<void>;
  /** Closes every child session; resolves once every process gaggle started is gone. */
  close(): Promise<void>;
}

/** What a reload did, by child name, and the settings it could not apply to a running gaggle. */
export interface Reloaded {
  added: string[];
  removed: string[];
  changed: string[];
  /** Config keys that changed but take effect only when gaggle starts again (the listen address, the state dir). */
  needRestart: string[];
  /** Settings of the edited config that were not applied, the ones in force being kept, and why. */
  kept: KeptSetting[];
}

/** A `[gateway]` key as the loaded config names it. */
export type GatewayKey = keyof GaggleConfig["gateway"];

export interface KeptSetting {
  /** The key as the file writes it: `gateway.auth_tokens`. */
  key: string;
  /** Why, and what to do; one sentence. */
  reason: string;
}

/** What the layer that serves gaggle hands its core. */
export interface GaggleOptions {
  /**
   * The base (`http://HOST:PORT`) of the URLs on which gaggle's own agents connect back to it: the HTTP
   * listener gaggle serves, or one opened for them. Asked for each URL issued; nothing before the first.
   */
  memberBase(): Promise<string>;
  /** Told of every request when something observes gaggle (the admin listener, traces, an audit log). */
  observer?: Observer | undefined;
  /** Why the config file is not the one in force, kept by whoever follows the file; none by default. */
  configErrors?: (() => string[]) | undefined;
  /**
   * The address of a listener off loopback that serves this gaggle with the config's bearer tokens: such a listener
   * never serves without one, so a reload that would leave it none keeps the tokens in force.
   */
  tokensRequiredOn?: string | undefined;
  /**
   * Told of the config in force as soon as a reload takes it, before children are closed and started: what must
   * follow it at once (the bearer tokens the listeners take) follows it here.
   */
  inForce?: ((config: GaggleConfig) => void) | undefined;
}

/**
 * A built-in child takes its calls as they come: each of its tools keeps its own limits (processes at once,
 * goslings active), and a tool that waits (a dispatched agent's whole run) must not hold up the others.
 */
const BUILT_IN_CONCURRENCY = Infinity;

/**
 * Built in the order each part needs the last: the switchboard first, so children and the hub meet on it
 * without either needing the other; then the children, the router over them, the catalog over the router,
 * and the hub, which hears the children and serves the clients.
 */
export function createGaggle(config: GaggleConfig, options: GaggleOptions): Gaggle {
  const switchboard = new Switchboard();
  const members = new MemberRegistry(options.memberBase);
  setReaperGrace(config.gateway.shutdownGraceMs);
  withholdFromChildren(configSecrets(config));
  const childOptions = { shutdownGraceMs: config.gateway.shutdownGraceMs, stateDir: stateDir(config), switchboard };
  makeStateDir(childOptions.stateDir);
  const builtIns = new BuiltInChildren(config, switchboard, members);
  const router = new Router([
    ...config.children.filter((child) => child.enabled).map((child) => routed(child, childOptions)),
    ...builtIns.children().map((child) => ({ child, concurrency: BUILT_IN_CONCURRENCY })),
  ]);
  const late = (child: string, kind: "tools" | "resources" | "prompts") => switchboard.listChanged(child, kind);
  let current = config;
  // The config in force is the one place each gateway key is read from: the catalog asks it at each list.
  const catalog = new ProxyCatalog(router, exposures(config), config.gateway.expose, { ms: () => current.gateway.listWaitMs, late });
  const hub = new SessionHub(switchboard, catalog, options.observer);
  // Besides the eager ones, the children the catalog knows nothing of start at once when their tools are to be
  // listed (proxy mode) or searched (search mode), so that the first tools/list or search finds them.
  const searched = () => current.gateway.expose === "search";
  const unknown = (name: string) => router.get(name).known().tools === undefined;
  const eager = (children: ChildConfig[]) =>
    children
      .filter((child) => child.startup === "eager" || ((searched() || catalog.exposes(child.name)) && unknown(child.name)))
      .map((child) => child.name);
  const reload = async (next: GaggleConfig, inPlace: readonly GatewayKey[] = []): Promise<Reloaded> => {
    const before = new Map(current.children.filter((child) => child.enabled).map((child) => [child.name, child]));
    const after = new Map(next.children.filter((child) => child.enabled).map((child) => [child.name, child]));
    const removed = [...before.keys()].filter((name) => !after.has(name));
    const added = [...after.keys()].filter((name) => !before.has(name));
    const changed = [...after.keys()].filter((name) => before.has(name) && !sameChild(before.get(name)!, after.get(name)!));
    const needRestart = restartOnlyKeys(current, next, inPlace);
    const kept = tokensKept(next, options.tokensRequiredOn);
    const offeredBefore = JSON.stringify([...exposures(current)]);
    // What resources/list names of everyone's work follows the visibility (see Visibility.listsWork).
    const seenBefore = current.gateway.visibility;
    // A revoked token's text stays out of children's environments as well as the new ones.
    withholdFromChildren([...configSecrets(current), ...configSecrets(next)]);
    current = running(current, next, kept.length === 0, inPlace);
    if (inPlace.includes("shutdownGraceMs")) {
      childOptions.shutdownGraceMs = current.gateway.shutdownGraceMs;
      setReaperGrace(current.gateway.shutdownGraceMs);
    }
    options.inForce?.(current);
    // Each child the edit replaces or drops, with what its calls in flight are told.
    const closing: Array<[Child | undefined, CloseReason]> = removed.map((name) => [router.remove(name), "removed"]);
    for (const name of [...changed, ...added]) closing.push([router.put(routed(after.get(name)!, childOptions)), "edited"]);
    const builtInChanges = builtIns.reconfigure(current);
    for (const name of builtInChanges.removed) closing.push([router.remove(name), "removed"]);
    removed.push(...builtInChanges.removed);
    for (const child of builtInChanges.made) {
      const before = router.put({ child, concurrency: BUILT_IN_CONCURRENCY });
      closing.push([before, "edited"]);
      (before ? changed : added).push(child.name);
    }
    changed.push(...builtInChanges.followed.map(({ name }) => name));
    catalog.reconfigure(exposures(current), current.gateway.expose);
    await Promise.allSettled([...closing.map(([child, why]) => child?.close(undefined, why)), ...builtInChanges.followed.map(({ done }) => done)]);
    router.warmUp(eager([...changed, ...added].flatMap((name) => after.get(name) ?? [])));
    // A built-in child's `expose` changes what is listed (and whether the meta-tools are) without remaking it.
    const reoffered = JSON.stringify([...exposures(current)]) !== offeredBefore;
    const reseen = current.gateway.visibility !== seenBefore;
    if (added.length + removed.length + changed.length > 0 || reoffered || reseen) hub.everyListChanged();
    return { added, removed, changed, needRestart, kept };
  };
  return {
    get config() {
      return current;
    },
    router,
    hub,
    catalog,
    members,
    observer: options.observer,
    configErrors: options.configErrors ?? (() => []),
    startEager: () => router.warmUp(eager(config.children.filter((child) => child.enabled))),
    reload,
    principalGone: (principal) => stopWorkOf(builtIns.children(), principal, members.ledBy(principal)),
    close: () => router.closeAll(),
  };
}

/**
 * Each child stops what `principal` and its team members started; the log names them, the children and the work.
 * A built-in child's call of theirs in flight may start work after that (it was awaiting something): once those
 * calls end, the child stops their work again. A long call holds up only its own child's second stop.
 */
async function stopWorkOf(children: Child[], principal: string, members: string[]): Promise<void> {
  const owners = [principal, ...members];
  const work = children
    .flatMap((child) => child.background())
    // What still runs: a process that ended is kept for its owner to read, and stops nothing.
    .filter((item) => item.owner !== null && owners.includes(item.owner) && item.endedAt === null)
    .map(({ kind, id, state }) => `${kind} ${id} (${state})`);
  const pending = children.map((child) => (child instanceof VirtualChild ? owners.flatMap((owner) => child.callsOf(owner)) : []));
  const stopped = await Promise.all(children.map((child) => stopOwners(child, owners)));
  log.info(
    { principal, members, children: children.filter((_, at) => stopped[at]).map((child) => child.name), work },
    "principal let in no more: its work in the built-in children is stopped",
  );
  await Promise.all(
    children.map(async (child, at) => {
      const calls = pending[at]!;
      if (!stopped[at] || calls.length === 0) return;
      await Promise.allSettled(calls);
      await stopOwners(child, owners);
      log.info(
        { principal, members, child: child.name, calls: calls.length },
        "calls in flight of a gone principal ended: what they started is stopped",
      );
    }),
  );
}

/** `child` stops what each of `owners` started; false when it refuses, being shared by every client. */
async function stopOwners(child: Child, owners: string[]): Promise<boolean> {
  for (const owner of owners) {
    try {
      await child.close(owner);
    } catch (error) {
      // A child shared by every client refuses: nothing in it is one principal's.
      if (error instanceof GaggleError && error.code === "PERMISSION_DENIED") return false;
      log.warn({ err: withStack(error), child: child.name, principal: owner }, "could not stop the work of a principal let in no more");
    }
  }
  return true;
}

function routed(child: ChildConfig, childOptions: McpChildOptions & { stateDir: string }): RoutedChild {
  return {
    child: childOf(child, childOptions),
    concurrency: child.concurrency,
    oneClientAtATime: true,
    timeoutMs: child.timeoutMs,
    ...(child.transport !== "stdio" && {
      // Sign-in (the SDK's OAuth client) is loaded when it is first asked for.
      signIn: async (urls: UrlOpener, signal?: AbortSignal) =>
        (await import("../children/oauth/sign-in-on-demand.js")).signInThrough(child, childOptions.stateDir, urls, signal),
    }),
  };
}

/** Two definitions of a child are the same when every field is: an env value or a header counts. */
function sameChild(a: ChildConfig, b: ChildConfig): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/**
 * The gateway keys a running gaggle follows: the log level, who sees whose work, how long proxy-mode lists wait
 * (asked at each list), and the bearer tokens (see tokensKept).
 */
const FOLLOWED_GATEWAY_KEYS: ReadonlySet<string> = new Set(["logLevel", "visibility", "listWaitMs", "listWaitMsByClient", "authToken", "authTokens"]);

/**
 * The settings a running gaggle cannot follow, named as the file writes them: every gateway key but those it
 * follows (the admin listen address, the state dir, whether stdio clients share a daemon, limits), and the
 * telemetry and audit sections.
 */
function restartOnlyKeys(before: GaggleConfig, after: GaggleConfig, inPlace: readonly GatewayKey[]): string[] {
  const gateway = Object.keys({ ...before.gateway, ...after.gateway }) as GatewayKey[];
  const keys = gateway
    .filter(
      (key) =>
        !FOLLOWED_GATEWAY_KEYS.has(key) && !inPlace.includes(key) && JSON.stringify(before.gateway[key]) !== JSON.stringify(after.gateway[key]),
    )
    .map((key) => `gateway.${snake(key)}`);
  for (const section of ["telemetry", "audit"] as const) {
    if (JSON.stringify(before[section]) !== JSON.stringify(after[section])) keys.push(`[${section}]`);
  }
  return keys;
}

/**
 * The config in force after a reload: the edited one, but for what a running gaggle cannot follow (see
 * restartOnlyKeys), which stays as it runs, so that a later edit is compared with what runs; the log level, the
 * visibility and the list waits follow, the keys taken `inPlace`, and the bearer tokens unless `tokensFollow` is
 * false (see tokensKept).
 */
function running(current: GaggleConfig, next: GaggleConfig, tokensFollow: boolean, inPlace: readonly GatewayKey[]): GaggleConfig {
  const { logLevel, visibility, listWaitMs, listWaitMsByClient, authToken, authTokens } = next.gateway;
  const taken = Object.fromEntries(inPlace.map((key) => [key, next.gateway[key]]));
  const followed = { logLevel, visibility, listWaitMs, listWaitMsByClient };
  const gateway = { ...current.gateway, ...taken, ...followed, ...(tokensFollow && { authToken, authTokens }) };
  return { ...next, gateway, telemetry: current.telemetry, audit: current.audit };
}

/** Why the edited config's tokens are not taken: they would leave a listener off loopback (`on`) without any. */
function tokensKept(next: GaggleConfig, on: string | undefined): KeptSetting[] {
  if (on === undefined || Object.keys(bearerTokens(next)).length > 0) return [];
  const reason = `the edited config names no bearer token (gateway.auth_token, gateway.auth_tokens, GAGGLE_AUTH_TOKEN), so gaggle keeps the tokens in force: it serves HTTP on ${on}, which it never does without one; set a token, or bind to 127.0.0.1 and restart`;
  return [{ key: "gateway.auth_tokens", reason }];
}

function snake(key: string): string {
  return key.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);
}

/**
 * A child over Streamable HTTP left to find its era ("auto") may speak both: each client is served in its own
 * era (see BothEras). A stdio child is not doubled, since that would be a second process.
 */
function childOf(config: ChildConfig, options: McpChildOptions): Child {
  const child = new McpChild(config, options);
  if (config.transport !== "http" || config.protocol !== "auto") return child;
  return new BothEras(child, () => new McpChild({ ...config, protocol: "2025-11-25" }, options));
}

/**
 * How each child is offered in proxy mode. A configured child follows its own `expose` (else the gateway's)
 * under its prefix; a built-in child keeps its tools' own names (gg_process_run, run_goose), and follows the
 * gateway's mode unless its `expose` says: true lists them in every mode, false leaves them to the meta-tools.
 */
function exposures(config: GaggleConfig): Map<string, Exposure> {
  const mode = config.gateway.expose;
  const map = new Map<string, Exposure>(
    config.children.map((child) => [child.name, { mode: child.expose ?? mode, prefix: child.prefix ?? child.name }]),
  );
  for (const name of VIRTUAL_CHILD_NAMES) {
    const { expose } = config.virtual[name];
    map.set(name, { mode: expose === undefined ? mode : expose ? "tools" : "meta", prefix: "", builtIn: true });
  }
  return map;
}

/** What `gaggle validate` adds to the config file's own checks: settings that would leave a child unable to work. */
export function configProblems(config: GaggleConfig): string[] {
  return virtualSettingsProblems(config);
}
