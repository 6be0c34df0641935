// Resources: the gateway's own, and the children's with URIs unchanged, routed to the child that owns them.
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ReadResourceRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import type { Child } from "../children/child.js";
import type { Gaggle } from "./gaggle.js";
import { callContext } from "./call-context.js";
import type { ClientSession } from "./client-session.js";
import { GATEWAY_RESOURCES, readGatewayResource } from "./resources.js";
import { onTheWire } from "./wire-errors.js";
import { resourceNotFound } from "../shared/errors.js";

export function registerResourceHandlers(server: Server, session: ClientSession, gaggle: Gaggle): void {
  const { catalog, hub } = gaggle;

  const owner = async (uri: string): Promise<Child> => {
    const child = await catalog.resourceOwner(uri);
    if (!child) throw resourceNotFound(uri);
    return child;
  };

  server.setRequestHandler(ListResourcesRequestSchema, () =>
    onTheWire(async () => ({ resources: [...GATEWAY_RESOURCES, ...(await catalog.resources())] })),
  );

  server.setRequestHandler(ListResourceTemplatesRequestSchema, () =>
    onTheWire(async () => ({ resourceTemplates: await catalog.resourceTemplates() })),
  );

  server.setRequestHandler(ReadResourceRequestSchema, (request, extra) =>
    onTheWire(async () => {
      const { uri, _meta } = request.params;
      const own = readGatewayResource(uri, gaggle);
      if (own) return own;
      return (await owner(uri)).readResource(uri, callContext(session, _meta, extra));
    }),
  );

  server.setRequestHandler(SubscribeRequestSchema, (request) =>
    onTheWire(async () => {
      const { uri } = request.params;
      await hub.subscribe(session, uri, await owner(uri));
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
