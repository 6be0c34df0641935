// Where gaggle's own agents connect back to it: the HTTP listener it serves, or a loopback one opened for them.
import type { MemberIdentity } from "../children/child.js";
import type { Gaggle } from "../gaggle.js";
import { memberPath } from "../gateway/members.js";
import { serveHttp, type HttpGateway } from "./http-server.js";

export interface MemberUrl {
  url: string;
  /** The URL stops working: for a member that was removed. */
  revoke(): void;
}

export class MemberEndpoint {
  private base: Promise<string> | undefined;
  private ownListener: Promise<HttpGateway> | undefined;

  constructor(private readonly gaggle: Gaggle) {}

  /** When gaggle serves HTTP, its agents connect to that listener. */
  useListener(http: HttpGateway): void {
    this.base = Promise.resolve(http.localBase);
  }

  /** A URL that opens MCP sessions acting as `identity`. Serving stdio only, gaggle first opens a loopback listener. */
  async urlFor(identity: MemberIdentity): Promise<MemberUrl> {
    if (!this.base) {
      this.ownListener = serveHttp(this.gaggle, { host: "127.0.0.1", port: 0, token: undefined, membersOnly: true });
      this.base = this.ownListener.then((listener) => listener.localBase);
    }
    const base = await this.base;
    const secret = this.gaggle.members.issue(identity);
    return { url: `${base}${memberPath(secret)}`, revoke: () => this.gaggle.members.revoke(secret) };
  }

  async close(): Promise<void> {
    const listener = await this.ownListener?.catch(() => undefined);
    await listener?.close();
  }
}
