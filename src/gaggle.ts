// Assembles a running gateway core from a loaded config: the children, their router, and the client-facing hub.
import type { Child } from "./children/child.js";
import { McpChild } from "./children/mcp-child.js";
import { setReaperGrace } from "./children/reaper.js";
import { Router } from "./children/router.js";
import type { GaggleConfig } from "./config/index.js";
import { ProxyCatalog } from "./gateway/proxy-catalog.js";
import { MemberRegistry } from "./gateway/members.js";
import { SessionHub } from "./gateway/session-hub.js";
import { MemberEndpoint } from "./transport/member-endpoint.js";
import { createVirtualChildren } from "./virtual/index.js";

export interface Gaggle {
  readonly config: GaggleConfig;
  readonly router: Router;
  /** Every connected client; children report to it. */
  readonly hub: SessionHub;
  /** Proxy mode's exposed names and resource owners. */
  readonly catalog: ProxyCatalog;
  /** Secrets of the team members gaggle's agents speak as. */
  readonly members: MemberRegistry;
  /** Where those agents connect back to gaggle. */
  readonly memberEndpoint: MemberEndpoint;
  /** Starts the children configured with `startup = "eager"`, in the background. */
  startEager(): void;
  /** Closes every child session; resolves once every process gaggle started is gone. */
  close(): Promise<void>;
}

export function createGaggle(config: GaggleConfig): Gaggle {
  const hub = new SessionHub();
  const options = { shutdownGraceMs: config.gateway.shutdownGraceMs, events: hub };
  setReaperGrace(options.shutdownGraceMs);
  const enabled = config.children.filter((child) => child.enabled);
  const children: Child[] = [
    ...enabled.map((child) => new McpChild(child, options)),
    // Member URLs are issued at run time, once the endpoint below exists.
    ...createVirtualChildren(config, hub, { urlFor: (identity) => memberEndpoint.urlFor(identity) }),
  ];
  const router = new Router(children);
  const catalog = new ProxyCatalog(router, config);
  hub.attach(router, catalog);
  const eager = new Set(enabled.filter((child) => child.startup === "eager").map((child) => child.name));
  const gaggle: Gaggle = {
    config,
    router,
    hub,
    catalog,
    members: new MemberRegistry(),
    get memberEndpoint() {
      return memberEndpoint;
    },
    startEager: () => router.startEager(eager),
    close: async () => {
      await router.closeAll();
      await memberEndpoint.close();
    },
  };
  const memberEndpoint = new MemberEndpoint(gaggle);
  return gaggle;
}
