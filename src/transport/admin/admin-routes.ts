// The admin paths: the status page at /, its JSON at /api/status and live at /api/events, Prometheus metrics at
// /metrics, and /healthz, /readyz for supervisors. Served by the admin listener and by --http beside /mcp.
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Gaggle } from "../../gateway/gaggle.js";
import type { Observatory } from "../../gateway/observe/observatory.js";
import { statusDocument, type StatusExtras, type Viewer } from "../../gateway/observe/status-document.js";
import { PAGE_POLICY, STATUS_PAGE } from "./status-page.js";

/** How often the live page hears the status again. */
export const EVENT_INTERVAL_MS = 1000;

const PATHS = new Set(["/", "/api/status", "/api/events", "/metrics", "/healthz", "/readyz"]);

/** Paths any prober may ask without a token: they say only whether gaggle is alive and ready. */
const OPEN_PATHS = new Set(["/healthz", "/readyz"]);

export class AdminRoutes {
  constructor(
    private readonly gaggle: Gaggle,
    private readonly observatory: Observatory,
    private readonly extras: StatusExtras,
  ) {}

  handles(path: string): boolean {
    return PATHS.has(path);
  }

  /** Whether `path` is answered before any Host, Origin or token check. */
  isOpen(path: string): boolean {
    return OPEN_PATHS.has(path);
  }

  /**
   * Whether `path` needs the bearer token besides the Host and Origin checks: all but the page itself, which holds
   * no data and must load in a browser (which sends no token) to ask for the token in its own requests.
   */
  needsToken(path: string): boolean {
    return path !== "/";
  }

  /** Answers a GET of one of the admin paths; `viewer` is who the guard let in (ignored on the open paths). */
  async serve(req: IncomingMessage, res: ServerResponse, path: string, viewer: Viewer): Promise<void> {
    if (req.method !== "GET" && req.method !== "HEAD") {
      return send(res, 405, "application/json", JSON.stringify({ error: `${path} answers GET only` }), { allow: "GET, HEAD" });
    }
    switch (path) {
      case "/healthz":
        return send(res, 200, "application/json", JSON.stringify({ status: "ok" }));
      case "/readyz":
        return this.ready(res);
      case "/":
        // A shell without data: what it shows it fetches with the viewer's token.
        return send(res, 200, "text/html; charset=utf-8", STATUS_PAGE, { "content-security-policy": PAGE_POLICY });
      case "/api/status":
        return send(res, 200, "application/json", JSON.stringify(this.document(viewer)));
      case "/api/events":
        return this.events(res, viewer);
      case "/metrics":
        return this.metrics(res);
    }
    return send(res, 404, "application/json", JSON.stringify({ error: `no such path ${path}` }));
  }

  private document(viewer: Viewer) {
    return statusDocument(this.gaggle, this.observatory, viewer, this.extras);
  }

  /** Ready once the config is loaded (it is, or nothing would serve) and every eager child runs. */
  private ready(res: ServerResponse): void {
    const { config, router } = this.gaggle;
    const eager = config.children.filter((child) => child.enabled && child.startup === "eager");
    const waiting = eager.filter((child) => router.status(child.name).state !== "running").length;
    // An open path: it says where the config is broken, not what the error quotes of it.
    const places = this.extras.configErrorPlaces();
    const ready = waiting === 0 && places.length === 0;
    const body = {
      status: ready ? "ready" : "not_ready",
      eager_children: eager.length,
      eager_not_running: waiting,
      config_errors: places.length,
      config_errors_at: places,
    };
    send(res, ready ? 200 : 503, "application/json", JSON.stringify(body));
  }

  /**
   * Server-sent events: the status now and then every EVENT_INTERVAL_MS. A page that stops reading gets nothing
   * more until it reads again, so a stalled viewer holds at most one document.
   */
  private events(res: ServerResponse, viewer: Viewer): void {
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-store", "x-accel-buffering": "no" });
    let stalled = false;
    const push = () => {
      if (stalled) return;
      stalled = !res.write(`event: status\ndata: ${JSON.stringify(this.document(viewer))}\n\n`);
    };
    res.on("drain", () => (stalled = false));
    push();
    const timer = setInterval(push, EVENT_INTERVAL_MS);
    res.once("close", () => clearInterval(timer));
  }

  private async metrics(res: ServerResponse): Promise<void> {
    const { metrics } = this.observatory;
    if (!metrics) return send(res, 404, "application/json", JSON.stringify({ error: "metrics are not collected by this gaggle" }));
    send(res, 200, metrics.contentType, await metrics.text());
  }
}

function send(res: ServerResponse, status: number, type: string, body: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { "content-type": type, "cache-control": "no-store", ...headers }).end(body);
}
