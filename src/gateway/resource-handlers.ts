// Resources: the gateway's own, and the children's with URIs unchanged, routed to the child that owns them.
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ReadResourceRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { callContext } from "./call-context.js";
import type { ClientSession } from "./client-session.js";
import type { GatewayRequests } from "./requests.js";
import type { SessionHub } from "./session-hub.js";
import { onTheWire } from "./wire-errors.js";

export function registerResourceHandlers(server: Server, session: ClientSession, requests: GatewayRequests, hub: SessionHub): void {
  server.setRequestHandler(ListResourcesRequestSchema, () => onTheWire(() => requests.listResources()));
  server.setRequestHandler(ListResourceTemplatesRequestSchema, () => onTheWire(() => requests.listResourceTemplates()));
  server.setRequestHandler(ReadResourceRequestSchema, (request, extra) =>
    onTheWire(() => requests.readResource(request.params.uri, callContext(session, request.params._meta, extra))),
  );

  server.setRequestHandler(SubscribeRequestSchema, (request, extra) =>
    onTheWire(async () => {
      const { uri } = request.params;
      await hub.subscribe(session, uri, await requests.followedOwner(uri, callContext(session, request.params._meta, extra)));
      return {};
    }),
  );

  server.setRequestHandler(UnsubscribeRequestSchema, (request) =>
    onTheWire(async () => {
      await hub.unsubscribe(session, request.params.uri);
      return {};
    }),
  );
}
