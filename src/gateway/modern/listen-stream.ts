// One subscriptions/listen stream: the changes its client opted in to, each tagged with the stream's id.
import { randomUUID } from "node:crypto";
import type { JSONRPCNotification, RequestId } from "@modelcontextprotocol/sdk/types.js";
import type { ListChangeListener } from "../session-hub.js";
import type { ModernExchange } from "./exchange.js";
import { META } from "../../shared/modern-protocol.js";

type ListKind = "tools" | "resources" | "prompts";

/** The filter of a listen request, as the specification names its fields. */
export interface SubscriptionFilter {
  toolsListChanged?: boolean;
  promptsListChanged?: boolean;
  resourcesListChanged?: boolean;
  resourceSubscriptions?: string[];
}

const FILTER_KEY: Record<ListKind, "toolsListChanged" | "promptsListChanged" | "resourcesListChanged"> = {
  tools: "toolsListChanged",
  prompts: "promptsListChanged",
  resources: "resourcesListChanged",
};

/**
 * Nothing is sent before the acknowledgement, which the specification requires to come first: what changes
 * meanwhile is held and sent right after it.
 */
export class ListenStream implements ListChangeListener {
  readonly id: string;
  readonly subscriptions = new Set<string>();
  private held: JSONRPCNotification[] | undefined = [];

  constructor(
    private readonly requestId: RequestId,
    private readonly filter: SubscriptionFilter,
    private readonly exchange: ModernExchange,
  ) {
    this.id = `listen:${randomUUID()}`;
  }

  get principal(): string {
    return this.exchange.principal;
  }

  wants(kind: ListKind): boolean {
    return this.filter[FILTER_KEY[kind]] === true;
  }

  listChanged(kind: ListKind): void {
    this.send(`notifications/${kind}/list_changed`, {});
  }

  resourceUpdated(uri: string): void {
    this.send("notifications/resources/updated", { uri });
  }

  /** Sends the acknowledgement of what is honoured, then whatever was held. */
  acknowledge(honoured: SubscriptionFilter): void {
    this.exchange.notify(this.tagged("notifications/subscriptions/acknowledged", { notifications: honoured }));
    const held = this.held ?? [];
    this.held = undefined;
    for (const notification of held) this.exchange.notify(notification);
  }

  private send(method: string, params: Record<string, unknown>): void {
    const notification = this.tagged(method, params);
    if (this.held) this.held.push(notification);
    else this.exchange.notify(notification);
  }

  private tagged(method: string, params: Record<string, unknown>): JSONRPCNotification {
    return { jsonrpc: "2.0", method, params: { ...params, _meta: { [META.subscriptionId]: this.requestId } } };
  }
}
