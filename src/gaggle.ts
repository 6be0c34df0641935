// Assembles a running gateway core from a loaded config: one Child per enabled entry, behind one router.
import type { Child } from "./children/child.js";
import { McpChild } from "./children/mcp-child.js";
import { setReaperGrace } from "./children/reaper.js";
import { Router } from "./children/router.js";
import type { GaggleConfig } from "./config/index.js";

export interface Gaggle {
  readonly config: GaggleConfig;
  readonly router: Router;
  /** Starts the children configured with `startup = "eager"`, in the background. */
  startEager(): void;
  /** Closes every child session; resolves once every process gaggle started is gone. */
  close(): Promise<void>;
}

export function createGaggle(config: GaggleConfig): Gaggle {
  const options = { shutdownGraceMs: config.gateway.shutdownGraceMs };
  setReaperGrace(options.shutdownGraceMs);
  const children: Child[] = config.children.filter((child) => child.enabled).map((child) => new McpChild(child, options));
  const router = new Router(children);
  const eager = new Set(config.children.filter((child) => child.enabled && child.startup === "eager").map((child) => child.name));
  return {
    config,
    router,
    startEager: () => router.startEager(eager),
    close: () => router.closeAll(),
  };
}
