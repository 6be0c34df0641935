// A gaggle serving stdio with its admin listener on a free loopback port, and requests to that listener.
import { request } from "node:http";
import { startGaggle, type RunningGaggle } from "../../helpers/gaggle.js";
import { until } from "../../helpers/poll.js";

export interface AdminGaggle extends RunningGaggle {
  /** The status page's URL, e.g. http://127.0.0.1:41234/. */
  admin: string;
}

/** `config` gets `[gateway] admin = "127.0.0.1:0"` before its own lines (so it must hold no [gateway] table). */
export async function startAdminGaggle(config: string, env: Record<string, string> = {}): Promise<AdminGaggle> {
  const gaggle = await startGaggle(`[gateway]\nadmin = "127.0.0.1:0"\n\n${config}`, { env });
  const line = await until(
    () => /status page at (\S+)/.exec(gaggle.stderr()),
    (match) => match !== null,
  );
  return { ...gaggle, admin: line![1]! };
}

export interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** A GET with exactly the headers given (fetch would set its own Host). */
export function get(url: string, headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => (body += chunk));
      res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, body }));
    });
    req.on("error", reject);
    req.end();
  });
}

export async function json<T = Record<string, unknown>>(url: string, headers: Record<string, string> = {}): Promise<T> {
  const answer = await get(url, headers);
  if (answer.status !== 200) throw new Error(`GET ${url}: ${answer.status} ${answer.body}`);
  return JSON.parse(answer.body) as T;
}

/** What the tests read of /api/status. */
export interface Status {
  gaggle: { version: string; pid: number; viewer: string };
  children: Array<{
    server_id: string;
    status: string;
    pid: number | null;
    calls: number;
    errors: number;
    p50_ms: number | null;
    protocol: string | null;
  }>;
  clients: Array<{ principal: string; client_name: string | null; session: string }>;
  background: Array<{ kind: string; id: string; owner: string | null; title: string; started_at: string | null; ended_at: string | null }>;
  recent_calls: Array<{
    principal: string;
    method: string;
    target: string;
    child: string | null;
    outcome: string;
    error: string | null;
    client: string | null;
  }>;
  config_errors: string[];
}

/** The first server-sent event of a stream such as /api/events, after which the stream is closed. */
export function firstEvent(url: string, headers: Record<string, string> = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => {
        text += chunk;
        const end = text.indexOf("\n\n");
        if (end === -1) return;
        resolve(text.slice(0, end));
        req.destroy();
      });
      res.on("end", () => reject(new Error(`GET ${url}: ${res.statusCode} ended before an event: ${text}`)));
    });
    req.on("error", reject);
    req.end();
  });
}
