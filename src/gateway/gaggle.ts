// Assembles a running gateway core from a loaded config: the children, their router, and the client-facing hub.
import type { Child } from "../children/child.js";
import { McpChild } from "../children/mcp-child.js";
import { setReaperGrace } from "../children/reaper.js";
import { Router } from "../children/router.js";
import type { GaggleConfig } from "../config/index.js";
import { ProxyCatalog } from "./proxy-catalog.js";
import { MemberRegistry } from "./members.js";
import { SessionHub } from "./session-hub.js";
import { createVirtualChildren, virtualSettingsProblems } from "../virtual/index.js";

export interface Gaggle {
  readonly config: GaggleConfig;
  readonly router: Router;
  /** Every connected client; children report to it. */
  readonly hub: SessionHub;
  /** Proxy mode's exposed names and resource owners. */
  readonly catalog: ProxyCatalog;
  /** Secrets of the team members gaggle's agents speak as, and the URLs they connect back on. */
  readonly members: MemberRegistry;
  /** Starts the children configured with `startup = "eager"`, in the background. */
  startEager(): void;
  /** Closes every child session; resolves once every process gaggle started is gone. */
  close(): Promise<void>;
}

/** What the layer that serves gaggle hands its core. */
export interface GaggleOptions {
  /**
   * The base (`http://HOST:PORT`) of the URLs on which gaggle's own agents connect back to it: the HTTP
   * listener gaggle serves, or one opened for them. Asked for when the first agent needs it.
   */
  memberBase(): Promise<string>;
}

export function createGaggle(config: GaggleConfig, options: GaggleOptions): Gaggle {
  const hub = new SessionHub();
  const members = new MemberRegistry(options.memberBase);
  const childOptions = { shutdownGraceMs: config.gateway.shutdownGraceMs, events: hub };
  setReaperGrace(childOptions.shutdownGraceMs);
  const enabled = config.children.filter((child) => child.enabled);
  const children: Child[] = [...enabled.map((child) => new McpChild(child, childOptions)), ...createVirtualChildren(config, hub, members)];
  const router = new Router(children);
  const catalog = new ProxyCatalog(router, config);
  hub.attach(router, catalog);
  const eager = new Set(enabled.filter((child) => child.startup === "eager").map((child) => child.name));
  return {
    config,
    router,
    hub,
    catalog,
    members,
    startEager: () => router.startEager(eager),
    close: () => router.closeAll(),
  };
}

/** What `gaggle validate` adds to the config file's own checks: settings that would leave a child unable to work. */
export function configProblems(config: GaggleConfig): string[] {
  return virtualSettingsProblems(config);
}
