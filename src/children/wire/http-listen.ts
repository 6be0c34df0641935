// A 2026-07-28 child's subscriptions/listen over Streamable HTTP: a POST of its own whose response stream stays open,
// ended by closing it (the specification's way on HTTP; there is no session a cancellation could reach).
import { EventSourceParserStream } from "eventsource-parser/stream";
import type { OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import type { ListenChannel } from "./child-listen.js";
import { modernFetch } from "./modern-fetch.js";

/**
 * Each stream is one POST with the configured headers and, for a child behind OAuth, the session's current
 * access token (the same `authProvider` the session's transport signs in with; a stream refused for an expired
 * token drops, and is opened again with the refreshed one). The SDK's transport cannot carry it: it has no way
 * to close one response stream and keep the others.
 */
export function httpListenChannel(url: string, headers: Record<string, string>, authProvider: OAuthClientProvider): ListenChannel {
  const fetchModern = modernFetch();
  return {
    open(request, deliver, dropped) {
      const controller = new AbortController();
      const post = async () => {
        const token = (await authProvider.tokens())?.access_token;
        const init: RequestInit = {
          method: "POST",
          headers: {
            ...headers,
            ...(token && { authorization: `Bearer ${token}` }),
            "content-type": "application/json",
            accept: "application/json, text/event-stream",
          },
          body: JSON.stringify(request),
          signal: controller.signal,
        };
        return readStream(fetchModern, url, init, deliver);
      };
      post().then(
        (answered) => !answered && !controller.signal.aborted && dropped(),
        () => !controller.signal.aborted && dropped(),
      );
      return () => controller.abort();
    },
  };
}

/** Delivers each message of the response; true when it ended with an answer (JSON, or the stream's last word). */
async function readStream(
  fetchModern: ReturnType<typeof modernFetch>,
  url: string,
  init: RequestInit,
  deliver: (message: JSONRPCMessage) => void,
): Promise<boolean> {
  const response = await fetchModern(url, init);
  const type = response.headers.get("content-type") ?? "";
  if (type.includes("application/json")) {
    deliver((await response.json()) as JSONRPCMessage);
    return true;
  }
  if (!response.ok || !type.includes("text/event-stream") || !response.body) {
    await response.body?.cancel();
    return false;
  }
  let answered = false;
  const events = response.body.pipeThrough(new TextDecoderStream()).pipeThrough(new EventSourceParserStream());
  for await (const event of events) {
    if ((event.event ?? "message") !== "message" || event.data === "") continue;
    let message: JSONRPCMessage;
    try {
      message = JSON.parse(event.data) as JSONRPCMessage;
    } catch {
      continue;
    }
    answered ||= !("method" in message);
    deliver(message);
  }
  return answered;
}
