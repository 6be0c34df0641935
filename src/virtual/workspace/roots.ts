// Where the workspace's tools may reach: the configured roots, narrowed by the client's own MCP roots where it
// offers them; every path is resolved with its symlinks followed before it is checked.
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { CallContext, Caller } from "../../children/child.js";
import { GaggleError, WireError, errorMessage } from "../../shared/errors.js";
import { canonical as canonicalAtStart, isUnder } from "../../shared/fs-checks.js";
import { isObject } from "../../shared/json.js";
import { META } from "../../shared/modern-protocol.js";
import { canonical, realTarget } from "../../shared/fs-probes.js";

/** How long a client gets to answer roots/list before the call fails. */
const ROOTS_ANSWER_MS = 10_000;

/** The roots one call may reach. */
export interface CallRoots {
  /** The configured roots, canonical. */
  configured: string[];
  /** The client's file roots, canonical; undefined when it offers none. */
  client: string[] | undefined;
}

/** Which shell, and which cached client roots, a call belongs to: its client session, or one key for calls without a caller. */
export function sessionKey(caller: Caller | undefined): string {
  if (!caller) return "(no caller)";
  // A 2026-07-28 client has no session: each request is a caller of its own, so its principal's calls share one.
  return caller.envelope !== undefined ? `principal:${caller.principal}` : caller.sessionId;
}

export class WorkspaceRoots {
  readonly configured: string[];
  /** Client roots by session; only for 2025 sessions, which say when their roots change. */
  private readonly cached = new Map<string, Promise<string[] | undefined>>();

  /** `source`: where the configured roots are set, as a refusal's hint names it. */
  constructor(
    roots: string[],
    private readonly source = "[virtual.workspace] roots",
  ) {
    // Synchronous: the roots are resolved once, as the configuration is loaded, before any call.
    this.configured = roots.map((root) => canonicalAtStart(root));
  }

  /** A client said its roots changed (the notification does not say which client): every client is asked again. */
  forgetClients(): void {
    this.cached.clear();
  }

  forget(session: string): void {
    this.cached.delete(session);
  }

  async forCall(ctx: CallContext): Promise<CallRoots> {
    return { configured: this.configured, client: await this.clientRoots(ctx) };
  }

  /** Where a new shell starts: the first client root under a configured root, else the first configured root. */
  home(roots: CallRoots): string {
    return roots.client?.find((root) => this.configured.some((allowed) => isUnder(root, allowed))) ?? this.configured[0]!;
  }

  /**
   * The real path `path` names (relative to `base`), symlinks followed, refused with PERMISSION_DENIED unless it
   * lies under a configured root and, where the client gave roots, under one of those too.
   */
  confine(path: string, base: string, roots: CallRoots): Promise<string> {
    return confine(path, base, roots, this.source);
  }

  private clientRoots(ctx: CallContext): Promise<string[] | undefined> {
    const caller = ctx.caller;
    if (!caller) return Promise.resolve(undefined);
    const modern = caller.envelope !== undefined;
    const key = sessionKey(caller);
    const known = modern ? undefined : this.cached.get(key);
    if (known) return known;
    const asking = askRoots(caller, ctx);
    if (!modern) {
      this.cached.set(key, asking);
      asking.catch(() => this.cached.delete(key));
    }
    return asking;
  }
}

/**
 * The real path `path` names (relative to `base`), symlinks followed, refused with PERMISSION_DENIED unless it lies
 * inside `roots`; `source` says where the configured roots are set.
 */
export async function confine(path: string, base: string, roots: CallRoots, source: string): Promise<string> {
  const real = await realTarget(resolve(base, path));
  if (real !== undefined && isInside(real, roots)) return real;
  const where = real === undefined ? ": it is a symlink whose target does not exist" : real === path ? "" : `: it is ${real}`;
  throw new GaggleError("PERMISSION_DENIED", `"${path}" is outside the allowed roots (${describeRoots(roots)})${where}`, {
    hint: `give a path under those roots; ${source} sets them, and a client's own roots narrow them`,
  });
}

/** `real` (a path with its symlinks resolved) lies under a configured root and, where the client gave roots, under one of those. */
export function isInside(real: string, roots: CallRoots): boolean {
  const inside = (list: string[]) => list.some((root) => isUnder(real, root));
  return inside(roots.configured) && (roots.client === undefined || inside(roots.client));
}

export function describeRoots(roots: CallRoots): string {
  const configured = roots.configured.join(", ");
  return roots.client === undefined ? configured : `${configured}; the client's: ${roots.client.join(", ") || "none on this machine"}`;
}

function declaresRoots(envelope: Record<string, unknown>): boolean {
  const capabilities = envelope[META.clientCapabilities];
  return isObject(capabilities) && isObject(capabilities.roots);
}

/** The client's file roots; undefined when it declared no roots capability (or, in 2026-07-28, cannot be asked). */
async function askRoots(caller: Caller, ctx: CallContext): Promise<string[] | undefined> {
  // A 2026-07-28 client is asked only in a call's result, where an undeclared capability fails the whole call:
  // one that declared no roots narrows nothing, as a 2025 client without the capability.
  if (caller.envelope !== undefined && !declaresRoots(caller.envelope)) return undefined;
  const signals = [AbortSignal.timeout(ROOTS_ANSWER_MS), ...(ctx.cancel ? [ctx.cancel.signal] : [])];
  let answer: Record<string, unknown>;
  try {
    answer = await caller.forward({ method: "roots/list" }, AbortSignal.any(signals));
  } catch (error) {
    // Refused before it was sent: the client has no roots capability, so it narrows nothing.
    if (error instanceof WireError) return undefined;
    throw new GaggleError("PERMISSION_DENIED", `the client's roots could not be read (roots/list failed: ${errorMessage(error)})`, {
      hint: "the workspace child reaches only paths under the client's roots when it offers them; check the client, then retry",
      cause: error,
    });
  }
  const listed = Array.isArray(answer.roots) ? answer.roots : [];
  const files = (
    await Promise.all(
      listed.map(async (root) => {
        if (!isObject(root) || typeof root.uri !== "string" || !root.uri.startsWith("file:")) return [];
        let path: string;
        try {
          path = fileURLToPath(root.uri);
        } catch {
          return [];
        }
        return [await canonical(path)];
      }),
    )
  ).flat();
  // A client that lists no folder of this machine narrows nothing: it has none to offer.
  return files.length > 0 ? files : undefined;
}
