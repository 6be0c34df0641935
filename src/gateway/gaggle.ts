// Assembles a running gateway core from a loaded config: the children, their router, and the client-facing hub.
import { BothEras } from "../children/both-eras.js";
import type { Child } from "../children/child.js";
import { McpChild, type McpChildOptions } from "../children/mcp-child.js";
import type { UrlOpener } from "../children/child.js";
import { setReaperGrace } from "../children/processes/reaper.js";
import { withholdFromChildren } from "../children/processes/child-env.js";
import { Router } from "../children/router.js";
import { Switchboard } from "../children/switchboard.js";
import { configSecrets, makeStateDir, stateDir, VIRTUAL_CHILD_NAMES, type ChildConfig, type GaggleConfig } from "../config/index.js";
import { ProxyCatalog, type Exposure } from "./proxy-catalog.js";
import { MemberRegistry } from "./members.js";
import { SessionHub } from "./session-hub.js";
import { createVirtualChildren, virtualSettingsProblems } from "../virtual/index.js";
import type { Observer } from "../shared/observer.js";

export interface Gaggle {
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
  /** Starts the children configured with `startup = "eager"`, in the background. */
  startEager(): void;
  /** Closes every child session; resolves once every process gaggle started is gone. */
  close(): Promise<void>;
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
  const enabled = config.children.filter((child) => child.enabled);
  const childOptions = { shutdownGraceMs: config.gateway.shutdownGraceMs, stateDir: stateDir(config), switchboard };
  makeStateDir(childOptions.stateDir);
  const router = new Router([
    ...enabled.map((child) => ({
      child: childOf(child, childOptions),
      concurrency: child.concurrency,
      oneClientAtATime: true,
      timeoutMs: child.timeoutMs,
      ...(child.transport !== "stdio" && {
        // Sign-in (the SDK's OAuth client) is loaded when it is first asked for.
        signIn: async (urls: UrlOpener, signal?: AbortSignal) =>
          (await import("../children/oauth/sign-in-on-demand.js")).signInThrough(child, childOptions.stateDir, urls, signal),
      }),
    })),
    ...createVirtualChildren(config, switchboard, members).map((child) => ({ child, concurrency: BUILT_IN_CONCURRENCY })),
  ]);
  const late = (child: string, kind: "tools" | "resources" | "prompts") => switchboard.listChanged(child, kind);
  const catalog = new ProxyCatalog(router, exposures(config), config.gateway.expose, { ms: config.gateway.listWaitMs, late });
  const hub = new SessionHub(switchboard, catalog, options.observer);
  // Besides the eager ones, the children the catalog knows nothing of start at once when their tools are to be
  // listed (proxy mode) or searched (search mode), so that the first tools/list or search finds them.
  const searched = config.gateway.expose === "search";
  const unknown = (name: string) => router.get(name).known().tools === undefined;
  const eager = enabled
    .filter((child) => child.startup === "eager" || ((searched || catalog.exposes(child.name)) && unknown(child.name)))
    .map((child) => child.name);
  return {
    config,
    router,
    hub,
    catalog,
    members,
    observer: options.observer,
    startEager: () => router.warmUp(eager),
    close: () => router.closeAll(),
  };
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
