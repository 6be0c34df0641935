// A remote child that may speak both protocol eras, reached in the era of the client that asks. Its lists, reads
// and 2026-07-28 clients go to the session "auto" finds (2026-07-28 for a child of both eras); 2025-11-25
// clients' tool calls, and resource subscriptions, go to a 2025-11-25 session of the same child, since a server's
// 2026-07-28 mode may lack what its 2025 mode offers (sampling and elicitation during a call, resources/subscribe).
// A client gets through gaggle at least what it gets from the child directly, in either era.
import type { CallToolResult, CompleteRequest, CompleteResult, GetPromptResult, ReadResourceResult, Tool } from "@modelcontextprotocol/sdk/types.js";
import { MODERN_VERSION } from "../shared/modern-protocol.js";
import { logger } from "../shared/log.js";
import type { BackgroundWork, CallContext, Child, ChildSchema, ChildStatus } from "./child.js";

export class BothEras implements Child {
  readonly name: string;
  readonly description: string | undefined;
  /** Made when a 2025-11-25 client first needs it. */
  private legacy: Child | undefined;
  /** The 2025-11-25 session could not be started (a server of 2026-07-28 only): everything goes to the other. */
  private legacyRefused = false;
  /** Where each subscription was made, so that it is ended there. */
  private readonly subscribedOn = new Map<string, Child>();
  private readonly log;

  /** `primary` is the child as configured ("auto"); `makeLegacy` makes the same child held to 2025-11-25. */
  constructor(
    private readonly primary: Child,
    private readonly makeLegacy: () => Child,
  ) {
    this.name = primary.name;
    this.description = primary.description;
    this.log = logger({ child: primary.name });
  }

  status(): ChildStatus {
    return this.primary.status();
  }

  tools(): Promise<Tool[]> {
    return this.primary.tools();
  }

  knownTool(name: string): Tool | undefined {
    return this.primary.knownTool(name);
  }

  known(): Partial<ChildSchema> {
    return this.primary.known();
  }

  schema(): Promise<ChildSchema> {
    return this.primary.schema();
  }

  /**
   * A 2025-11-25 client's call (a caller without a 2026-07-28 envelope) goes to the 2025-11-25 session, where
   * the child may ask it things; a tool the child offers in 2026-07-28 only stays on the other session.
   */
  async callTool(name: string, args: Record<string, unknown>, ctx: CallContext): Promise<CallToolResult> {
    const legacy = ctx.caller && ctx.caller.envelope === undefined ? await this.legacyIfBoth() : undefined;
    return (legacy?.knownTool(name) ? legacy : this.primary).callTool(name, args, ctx);
  }

  readResource(uri: string, ctx: CallContext): Promise<ReadResourceResult> {
    return this.primary.readResource(uri, ctx);
  }

  getPrompt(name: string, args: Record<string, string> | undefined, ctx: CallContext): Promise<GetPromptResult> {
    return this.primary.getPrompt(name, args, ctx);
  }

  complete(params: CompleteRequest["params"], ctx: CallContext): Promise<CompleteResult> {
    return this.primary.complete(params, ctx);
  }

  /** On the 2025-11-25 session where the child speaks both eras: its updates come on that session's stream. */
  async subscribe(uri: string): Promise<void> {
    const child = (await this.legacyIfBoth()) ?? this.primary;
    await child.subscribe(uri);
    this.subscribedOn.set(uri, child);
  }

  async unsubscribe(uri: string): Promise<void> {
    const child = this.subscribedOn.get(uri) ?? this.primary;
    this.subscribedOn.delete(uri);
    await child.unsubscribe(uri);
  }

  background(): BackgroundWork[] {
    return this.primary.background();
  }

  async close(): Promise<{ uptimeMs: number | null }> {
    const [closed] = await Promise.all([this.primary.close(), this.legacy?.close()]);
    return closed;
  }

  /**
   * The 2025-11-25 session, started if need be, when the child was found to speak 2026-07-28 and takes a
   * 2025-11-25 session too; undefined otherwise (the primary session then serves, in whatever era it speaks).
   * The primary is started first when its era is not known yet: until then it is not known whether two differ.
   */
  private async legacyIfBoth(): Promise<Child | undefined> {
    if (this.legacyRefused) return undefined;
    if (this.primary.status().protocol === null) await this.primary.tools();
    if (this.primary.status().protocol !== MODERN_VERSION) return undefined;
    this.legacy ??= this.makeLegacy();
    try {
      await this.legacy.tools();
      return this.legacy;
    } catch (error) {
      this.legacyRefused = true;
      this.log.info({ err: error }, "the child speaks 2026-07-28 and takes no 2025-11-25 session: its 2025 clients are served in 2026-07-28");
      void this.legacy.close().catch(() => {});
      return undefined;
    }
  }
}
