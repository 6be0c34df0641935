// The status page: one HTML document with its own style and script, nothing loaded from elsewhere. It reads the
// status from /api/events (server-sent events, read with fetch so that a bearer token can go with them).
import { createHash } from "node:crypto";

/**
 * Runs in the browser. Every value from the gateway (a tool name, a stderr line, an error) is set as text, never
 * as markup. A token given as #token=... is kept for the tab and sent as a bearer token; it never reaches a URL
 * the server sees.
 */
const SCRIPT = String.raw`
"use strict";
(() => {
  const fromHash = new URLSearchParams(location.hash.slice(1)).get("token");
  if (fromHash) { sessionStorage.setItem("gaggle-token", fromHash); history.replaceState(null, "", location.pathname); }
  const token = sessionStorage.getItem("gaggle-token");
  const headers = token ? { authorization: "Bearer " + token } : {};
  const $ = (id) => document.getElementById(id);

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) node.setAttribute(key, value);
    for (const child of children) node.append(child instanceof Node ? child : document.createTextNode(child == null ? "" : String(child)));
    return node;
  }
  const ms = (value) => (value == null ? "\u2013" : value < 1000 ? value.toFixed(1) + " ms" : (value / 1000).toFixed(2) + " s");
  function duration(value) {
    if (value == null) return "\u2013";
    const s = Math.floor(value / 1000);
    if (s < 60) return s + "s";
    if (s < 3600) return Math.floor(s / 60) + "m " + (s % 60) + "s";
    return Math.floor(s / 3600) + "h " + Math.floor((s % 3600) / 60) + "m";
  }
  const since = (iso) => (iso ? duration(Date.now() - Date.parse(iso)) : "\u2013");
  // A state is shown in words ("not started"); an error code as it is written, so it can be looked up.
  const badge = (state, label) =>
    el("span", { class: "badge " + String(state).replace(/[^a-z_]/g, ""), "data-state": state }, label ?? String(state).replaceAll("_", " "));
  // Work that ended shows how long it ran, not how long ago it started.
  const ran = (work) => (work.ended_at ? duration(Date.parse(work.ended_at) - Date.parse(work.started_at)) : since(work.started_at));

  function table(id, head, rows, empty) {
    const body = rows.length === 0 ? [el("tr", {}, el("td", { colspan: String(head.length), class: "empty" }, empty))] : rows;
    $(id).replaceChildren(el("thead", {}, el("tr", {}, ...head.map((title) => el("th", {}, title)))), el("tbody", {}, ...body));
  }

  function childRow(child) {
    const where = child.pid != null ? "pid " + child.pid : child.url || child.transport;
    const error = child.error || (child.last_error && child.last_error.type + (child.last_error.message ? ": " + child.last_error.message : "")) || "";
    const stderr = child.stderr.length === 0 ? "" : el("details", {}, el("summary", {}, child.stderr.length + (child.stderr.length === 1 ? " line" : " lines")), el("pre", {}, child.stderr.join("\n")));
    return el("tr", { "data-child": child.server_id },
      el("td", { class: "name" }, child.server_id), el("td", {}, badge(child.status)), el("td", {}, child.protocol || "\u2013"),
      el("td", {}, where), el("td", {}, duration(child.uptime_ms)), el("td", { class: "num" }, child.restarts),
      el("td", { class: "num", "data-calls": String(child.calls) }, child.calls), el("td", { class: "num" }, child.errors),
      el("td", { class: "num" }, ms(child.p50_ms)), el("td", { class: "num" }, ms(child.p95_ms)),
      el("td", { class: "num" }, child.queue.running + " / " + child.queue.waiting),
      el("td", { class: "error" }, error), el("td", {}, stderr));
  }

  function render(status) {
    const g = status.gaggle;
    $("summary").textContent = "gaggle " + g.version + " \u00b7 pid " + g.pid + " \u00b7 up " + duration(g.uptime_ms) + " \u00b7 " + g.config + (g.viewer !== "local" ? " \u00b7 as " + g.viewer : "");
    const errors = status.config_errors;
    $("config-errors").hidden = errors.length === 0;
    $("config-errors").replaceChildren(el("strong", {}, "The config file did not load; the running config stays: "), ...errors.map((text) => el("pre", {}, text)));
    table("children", ["child", "state", "protocol", "process", "uptime", "restarts", "calls", "errors", "p50", "p95", "queue (running / waiting)", "last error", "stderr"],
      status.children.map(childRow), "no children configured");
    table("clients", ["principal", "client", "session", "connected for"], status.clients.map((c) =>
      el("tr", {}, el("td", {}, c.principal), el("td", {}, c.client_name ? c.client_name + " " + c.client_version : "(not initialized)"), el("td", { class: "mono" }, c.session), el("td", {}, since(c.since)))), "no client connected");
    table("background", ["kind", "id", "child", "owner", "state", "what", "run time"], status.background.map((w) =>
      el("tr", {}, el("td", {}, w.kind), el("td", { class: "mono" }, w.id), el("td", {}, w.child), el("td", {}, w.owner || "every operator"), el("td", {}, badge(w.state)), el("td", { class: "mono" }, w.title), el("td", { class: "ran" }, ran(w)))),
      "no background processes, goslings, agents or teams");
    table("calls", ["time", "principal", "client", "request", "child", "outcome", "duration"], status.recent_calls.map((c) =>
      el("tr", {}, el("td", {}, new Date(c.time).toLocaleTimeString()), el("td", {}, c.principal), el("td", {}, c.client || "\u2013"),
        el("td", { class: "mono" }, c.method + " " + (c.target || "")), el("td", {}, c.child ? c.child + (c.tool ? "." + c.tool : "") : "\u2013"),
        el("td", {}, c.outcome === "error" ? badge("error", c.error) : badge(c.outcome)), el("td", { class: "num" }, ms(c.duration_ms)))), "no calls yet");
  }

  function connected(live, why) {
    $("live").textContent = live ? "live" : "reconnecting" + (why ? ": " + why : "");
    $("live").className = live ? "live on" : "live off";
  }

  async function follow() {
    for (;;) {
      try {
        const response = await fetch("/api/events", { headers, cache: "no-store" });
        if (response.status === 401)
          throw new Error(token ? "the token this page was opened with is not taken (any more): open the page as /#token=YOUR_TOKEN" : "this gaggle wants a token: open the page as /#token=YOUR_TOKEN");
        if (!response.ok) throw new Error("HTTP " + response.status);
        connected(true);
        const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
        let buffer = "";
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          buffer += value;
          let end;
          while ((end = buffer.indexOf("\n\n")) >= 0) {
            const event = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            const data = event.split("\n").filter((line) => line.startsWith("data: ")).map((line) => line.slice(6)).join("\n");
            if (data) render(JSON.parse(data));
          }
        }
        connected(false, "the stream ended");
      } catch (error) {
        connected(false, error.message);
      }
      await new Promise((resolve) => setTimeout(resolve, 2000));
    }
  }
  follow();
})();
`;

const STYLE = `
:root { color-scheme: light dark; --bg: #fbfbfa; --fg: #1d1d1b; --muted: #6b6b66; --line: #deded8; --head: #f0f0ec;
  --ok: #1a7f37; --warn: #9a6700; --bad: #cf222e; --idle: #57606a; }
@media (prefers-color-scheme: dark) { :root { --bg: #141413; --fg: #e8e8e3; --muted: #9a9a93; --line: #33332f; --head: #1f1f1d; } }
* { box-sizing: border-box; }
body { margin: 0; padding: 1.25rem 1.5rem 3rem; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; background: var(--bg); color: var(--fg); }
header { display: flex; align-items: baseline; gap: 1rem; flex-wrap: wrap; }
h1 { font-size: 1.35rem; margin: 0; }
h2 { font-size: 1rem; margin: 1.75rem 0 0.5rem; }
#summary { color: var(--muted); }
.live { margin-left: auto; font-size: 0.85rem; padding: 0.1rem 0.6rem; border-radius: 1rem; border: 1px solid var(--line); }
.live.on { color: var(--ok); } .live.off { color: var(--bad); }
table { border-collapse: collapse; width: 100%; font-size: 13px; }
th, td { text-align: left; padding: 0.35rem 0.6rem; border-bottom: 1px solid var(--line); vertical-align: top; }
th { background: var(--head); font-weight: 600; white-space: nowrap; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.name { font-weight: 600; } td.mono, pre { font-family: ui-monospace, "SF Mono", Menlo, monospace; font-size: 12px; }
td.error { color: var(--bad); max-width: 28rem; overflow-wrap: anywhere; }
td.empty { color: var(--muted); font-style: italic; }
pre { margin: 0.3rem 0 0; white-space: pre-wrap; overflow-wrap: anywhere; max-height: 16rem; overflow: auto; }
.badge { display: inline-block; padding: 0 0.5rem; border-radius: 0.6rem; font-size: 12px; border: 1px solid currentColor; white-space: nowrap; }
.badge.running, .badge.ok, .badge.completed, .badge.working { color: var(--ok); }
.badge.starting, .badge.stopping, .badge.needs_auth, .badge.tool_error, .badge.timed_out { color: var(--warn); }
.badge.failed, .badge.error, .badge.killed { color: var(--bad); }
.badge.not_started, .badge.stopped, .badge.released { color: var(--idle); }
#config-errors { border: 1px solid var(--bad); color: var(--bad); padding: 0.6rem 0.9rem; border-radius: 6px; margin-top: 1rem; }
`;

const HTML = (script: string) => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>gaggle status</title>
<style>${STYLE}</style>
</head>
<body>
<header><h1>gaggle</h1><span id="summary">connecting…</span><span id="live" class="live off">connecting</span></header>
<div id="config-errors" hidden></div>
<h2>Children</h2><table id="children"></table>
<h2>Clients</h2><table id="clients"></table>
<h2>Background work</h2><table id="background"></table>
<h2>Latest calls</h2><table id="calls"></table>
<script>${script}</script>
</body>
</html>
`;

export const STATUS_PAGE = HTML(SCRIPT);

/** The page loads nothing from elsewhere and runs its own script alone (by its hash), styled by its own style. */
export const PAGE_POLICY = [
  "default-src 'none'",
  `script-src 'sha256-${createHash("sha256").update(SCRIPT).digest("base64")}'`,
  "style-src 'unsafe-inline'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");
