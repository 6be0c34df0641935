// The one JSON document of a running gaggle that the status page, /api/status and `gaggle status` read: its
// children, clients, background work, latest calls and pending config errors, as one viewer may see them.
import type { BackgroundWork } from "../../children/child.js";
import type { Gaggle } from "../gaggle.js";
import { statusView } from "../meta/status-view.js";
import { GAGGLE_VERSION } from "../../shared/version.js";
import { Visibility } from "../../virtual/visibility.js";
import type { LastError } from "./call-stats.js";
import type { Observatory } from "./observatory.js";

/** Who is looking: with named tokens each principal sees its own clients, work and calls; without, the one person sees all. */
export interface Viewer {
  principal: string;
  everything: boolean;
}

/** What the page shows beside the gateway's own state: set by whoever serves it. */
export interface StatusExtras {
  /** When this gaggle started serving. */
  startedAt: Date;
  /** A config edit that did not load, kept until one does. */
  configErrors(): string[];
  /** Where each of those errors is, without what it says: for readers shown no config text (/readyz). */
  configErrorPlaces(): string[];
}

export function statusDocument(gaggle: Gaggle, observatory: Observatory, viewer: Viewer, extras: StatusExtras) {
  const { router, hub } = gaggle;
  // What the tools let the viewer see: its own, its team members' (it leads their team), everyone's with visibility "all".
  const visibility = Visibility.of(gaggle.config, gaggle.members);
  const mine = (owner: string | null) => viewer.everything || visibility.sees(owner, viewer.principal);
  return {
    gaggle: {
      version: GAGGLE_VERSION,
      pid: process.pid,
      config: gaggle.config.path,
      started_at: extras.startedAt.toISOString(),
      uptime_ms: Date.now() - extras.startedAt.getTime(),
      viewer: viewer.principal,
    },
    children: router.names().map((name) => {
      const view = statusView(router.status(name));
      const { last_error, ...calls } = observatory.stats.summary(name);
      const config = gaggle.config.children.find((child) => child.name === name);
      return { ...view, url: config?.url ?? null, ...calls, last_error: last_error && lastErrorView(last_error, mine(last_error.principal)) };
    }),
    clients: hub
      .clients()
      .filter((client) => mine(client.principal))
      .map((client) => ({
        session: client.id,
        principal: client.principal,
        client_name: client.client?.name ?? null,
        client_version: client.client?.version ?? null,
        since: client.since.toISOString(),
      })),
    background: router.all().flatMap((child) =>
      child
        .background()
        .filter((work) => mine(work.owner))
        .map((work) => backgroundView(child.name, work)),
    ),
    recent_calls: observatory.recent.latest().filter((record) => mine(record.principal)),
    config_errors: extras.configErrors(),
  };
}

export type StatusDocument = ReturnType<typeof statusDocument>;

/**
 * A child's latest failure as a viewer may see it: its kind and time for all (the child is everyone's), its message
 * only for a viewer who sees the calls of the principal that made it, as it may quote that call's arguments.
 */
function lastErrorView({ type, message, at }: LastError, visible: boolean) {
  return { type, message: visible ? (message ?? null) : null, at };
}

function backgroundView(child: string, work: BackgroundWork) {
  return {
    child,
    kind: work.kind,
    id: work.id,
    owner: work.owner,
    state: work.state,
    title: work.title,
    started_at: work.startedAt?.toISOString() ?? null,
    ended_at: work.endedAt?.toISOString() ?? null,
  };
}
