// A loopback listener for gaggle's own agents alone, for when gaggle serves no HTTP of its own (stdio, one-shot commands).
import type { GaggleConfig } from "../config/index.js";
import { createGaggle, type Gaggle, type GaggleOptions } from "../gateway/gaggle.js";
import type { Observer } from "../shared/observer.js";
import type { HttpGateway } from "./http-server.js";

/** Opened when the first member needs it; it answers member paths only. Once closed, it stays closed. */
export class MembersListener {
  private listener: Promise<HttpGateway> | undefined;
  private closed = false;

  constructor(private readonly gaggle: Gaggle) {}

  /** The base of member URLs: `http://127.0.0.1:PORT`. A member added while gaggle shuts down gets none. */
  async base(): Promise<string> {
    if (this.closed) throw new Error("gaggle is shutting down: its members' listener is closed");
    // The HTTP server is loaded with the first member, not with gaggle.
    this.listener ??= import("./http-server.js").then(({ serveHttp }) =>
      serveHttp(this.gaggle, { host: "127.0.0.1", port: 0, tokens: {}, membersOnly: true }),
    );
    return (await this.listener).localBase;
  }

  async close(): Promise<void> {
    this.closed = true;
    const listener = await this.listener?.catch(() => undefined);
    await listener?.close();
  }
}

/** A gaggle whose agents connect back on a members listener of its own; close the listener after gaggle. */
export function createGaggleWithListener(
  config: GaggleConfig,
  observer?: Observer,
  configErrors?: () => string[],
  inForce?: GaggleOptions["inForce"],
): { gaggle: Gaggle; members: MembersListener } {
  const gaggle = createGaggle(config, { memberBase: () => members.base(), observer, configErrors, inForce });
  const members = new MembersListener(gaggle);
  return { gaggle, members };
}
