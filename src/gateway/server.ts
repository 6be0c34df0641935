// The MCP server one client talks to: a session of its own, backed by the children every client shares.
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { RootsListChangedNotificationSchema, SetLevelRequestSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv";
import { LOCAL_PRINCIPAL, type ClientPrincipal } from "../children/child.js";
import { NoiseLog } from "../children/wire/noise-log.js";
import type { Gaggle } from "./gaggle.js";
import { GAGGLE_NAME, GAGGLE_VERSION } from "../shared/version.js";
import { CAPABILITIES, configErrorText, instructionsWith } from "./capabilities.js";
import { CheckedServer } from "./checked-server.js";
import { ClientSession } from "./client-session.js";
import { GatewayRequests } from "./requests.js";
import { registerPromptHandlers } from "./prompt-handlers.js";
import { registerResourceHandlers } from "./resource-handlers.js";
import { registerToolHandlers, type ToolCallHandler } from "./tool-handlers.js";
import { onTheWire } from "./wire-errors.js";
import { UnreadableMessageError } from "../shared/errors.js";
import { lazyLogger } from "../shared/log.js";

const log = lazyLogger({ subsystem: "client" });

/**
 * One validator for every session: the SDK would build an Ajv with its formats for each Server (about 0.4 ms
 * per client session), to check elicitation answers, which gaggle forwards without checking itself.
 */
const SCHEMA_VALIDATOR = new AjvJsonSchemaValidator();

export interface GatewayServer {
  /** Answers every request of the session but tools/call; connected to the client's connection (see ClientConnection). */
  server: Server;
  /** tools/call, which the client's connection answers beside the server; a failure of the call is answered by callFailed. */
  callTool: ToolCallHandler;
  /** What a tools/call of `name` answers for a failure of the call (see GatewayRequests.callFailed); a refusal is thrown. */
  callFailed(name: string, error: unknown): CallToolResult;
  /**
   * The client's connection closed with `reason`: the requests the server still answers are cancelled with it (see
   * callContext), and the session leaves the hub. Told before the server learns of the close.
   */
  closed(reason: Error): void;
  /** The client sent a request of this method. */
  requested(method: string): void;
}

/** One client session; it joins the hub at once and leaves it when its connection closes. */
export function createGatewayServer(gaggle: Gaggle, sessionId: string, who: ClientPrincipal = { principal: LOCAL_PRINCIPAL }): GatewayServer {
  const problems = gaggle.configErrors();
  const server = new CheckedServer(
    { name: GAGGLE_NAME, version: GAGGLE_VERSION },
    { capabilities: CAPABILITIES, instructions: instructionsWith(gaggle.catalog.instructions, problems), jsonSchemaValidator: SCHEMA_VALIDATOR },
  );
  const session = new ClientSession(sessionId, server, who);
  // A client that connects while the config does not load hears why, besides the instructions that say it.
  if (problems.length > 0) server.oninitialized = () => session.log({ level: "error", logger: "gaggle", data: configErrorText(problems) });

  const requests = new GatewayRequests(gaggle);
  const callTool = registerToolHandlers(server, session, requests);
  registerResourceHandlers(server, session, requests, gaggle.hub);
  registerPromptHandlers(server, session, requests);

  server.setRequestHandler(SetLevelRequestSchema, (request) =>
    onTheWire(async () => {
      await gaggle.hub.setLogLevel(session, request.params.level);
      return {};
    }),
  );
  server.setNotificationHandler(RootsListChangedNotificationSchema, () => {
    gaggle.hub.rootsChanged();
  });

  // A message the client sent that could not be taken, or a reply that could not be sent: kept on stderr.
  // The fault is in what the client sent, not in gaggle: a reason per kind, at a bounded rate, never a stack.
  const noise = new NoiseLog(log.child({ session: sessionId }), "protocol errors from the client");
  server.onerror = (error) =>
    error instanceof UnreadableMessageError ? noise.note(error, "unreadable message from the client, answered with an error") : noise.note(error);
  gaggle.hub.add(session);
  const closed = (reason: Error) => {
    session.ended.abort(reason);
    noise.summarise();
    void gaggle.hub.remove(session);
  };
  const requested = (method: string) => {
    if (method !== "initialize") session.active = true;
  };
  return { server, callTool, callFailed: (name, error) => requests.callFailed(name, error), closed, requested };
}
