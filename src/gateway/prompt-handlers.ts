// Prompts under their exposed names, and completions routed to the child that owns the prompt or template.
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { CompleteRequestSchema, ErrorCode, GetPromptRequestSchema, ListPromptsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import type { Gaggle } from "./gaggle.js";
import { callContext } from "./call-context.js";
import type { ClientSession } from "./client-session.js";
import { onTheWire } from "./wire-errors.js";
import { WireError } from "../shared/errors.js";

export function registerPromptHandlers(server: Server, session: ClientSession, gaggle: Gaggle): void {
  const { catalog } = gaggle;

  const prompt = async (name: string) => {
    const owned = await catalog.resolvePrompt(name);
    if (!owned) throw new WireError(ErrorCode.InvalidParams, `Unknown prompt: ${name}; prompts/list shows the prompts this gateway offers`);
    return owned;
  };

  server.setRequestHandler(ListPromptsRequestSchema, () => onTheWire(async () => ({ prompts: await catalog.prompts() })));

  server.setRequestHandler(GetPromptRequestSchema, (request, extra) =>
    onTheWire(async () => {
      const { name, arguments: args, _meta } = request.params;
      const { child, item } = await prompt(name);
      return child.getPrompt(item.name, args, callContext(session, _meta, extra));
    }),
  );

  server.setRequestHandler(CompleteRequestSchema, (request, extra) =>
    onTheWire(async () => {
      const { ref, _meta } = request.params;
      const ctx = callContext(session, _meta, extra);
      if (ref.type === "ref/prompt") {
        const { child, item } = await prompt(ref.name);
        return child.complete({ ...request.params, ref: { ...ref, name: item.name } }, ctx);
      }
      const child = await catalog.templateOwner(ref.uri);
      if (!child) throw new WireError(ErrorCode.InvalidParams, `No child offers the resource template ${ref.uri}`);
      return child.complete(request.params, ctx);
    }),
  );
}
