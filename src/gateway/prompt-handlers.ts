// Prompts under their exposed names, and completions routed to the child that owns the prompt or template.
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { CompleteRequestSchema, GetPromptRequestSchema, ListPromptsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { callContext } from "./call-context.js";
import type { ClientSession } from "./client-session.js";
import type { GatewayRequests } from "./requests.js";
import { onTheWire } from "./wire-errors.js";

export function registerPromptHandlers(server: Server, session: ClientSession, requests: GatewayRequests): void {
  server.setRequestHandler(ListPromptsRequestSchema, () => onTheWire(() => requests.listPrompts()));
  server.setRequestHandler(GetPromptRequestSchema, (request, extra) =>
    onTheWire(() => {
      const { name, arguments: args, _meta } = request.params;
      return requests.getPrompt(name, args, callContext(session, _meta, extra));
    }),
  );
  server.setRequestHandler(CompleteRequestSchema, (request, extra) =>
    onTheWire(() => requests.complete(request.params, callContext(session, request.params._meta, extra))),
  );
}
