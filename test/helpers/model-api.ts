// A stand-in for the Anthropic Messages API, for a real client (Claude Code) pointed at it with ANTHROPIC_BASE_URL:
// it records the tools each request offers the model, and the test's script says what the model answers.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** One request of the client's conversation loop: the tools it offered, and the results of the model's last tool uses. */
export interface ModelRequest {
  tools: string[];
  /** The text of each result of the model's last tool uses, by the name of the tool that was used. */
  results: Array<{ tool: string; text: string }>;
  /** The text of the conversation's last user message that holds text (the prompt, and what a client adds to it). */
  prompt: string;
}

/** What the model answers: a tool use, or a final text that ends the turn. */
export type ModelTurn = { use: string; input: Record<string, unknown> } | { text: string };

interface Block {
  type: string;
  id?: string;
  tool_use_id?: string;
  text?: string;
  content?: string | Array<{ type: string; text?: string }>;
}

/** What the test's script says the model answers to each request of the conversation loop. */
export type ModelScript = (request: ModelRequest) => ModelTurn | Promise<ModelTurn>;

/**
 * A stand-in model API on a loopback port: it reads each request's body, serves it as its API does (`serve`), and
 * keeps every request that offered tools in `requests`.
 */
export abstract class StandInApi {
  /** Every request that offered tools (the conversation loop's), in order. */
  readonly requests: ModelRequest[] = [];
  private readonly server = createServer((request, response) => void this.read(request, response));

  protected constructor(protected readonly script: ModelScript) {}

  /** Resolves once it listens. */
  protected async listen(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    return this;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  protected abstract serve(request: IncomingMessage, body: string, response: ServerResponse): Promise<void>;

  private async read(request: IncomingMessage, response: ServerResponse): Promise<void> {
    let body = "";
    for await (const chunk of request) body += String(chunk);
    await this.serve(request, body, response);
  }
}

export class StandInModel extends StandInApi {
  private readonly used = new Map<string, string>();

  static start(script: ModelScript): Promise<StandInModel> {
    return new StandInModel(script).listen();
  }

  protected async serve(request: IncomingMessage, body: string, response: ServerResponse): Promise<void> {
    // A reachability check (HEAD /), a token count: answered, and not part of the conversation.
    if (request.method !== "POST" || !request.url?.startsWith("/v1/messages") || request.url.includes("count_tokens")) {
      response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ input_tokens: 1 }));
      return;
    }
    const sent = JSON.parse(body) as {
      model?: string;
      stream?: boolean;
      tools?: Array<{ name: string }>;
      messages?: Array<{ role: string; content: unknown }>;
    };
    const tools = (sent.tools ?? []).map((tool) => tool.name);
    let turn: ModelTurn = { text: "ok" };
    if (tools.length > 0) {
      // The results of the model's last tool uses are in the messages after its own last one (a client may add
      // messages of its own after them).
      const messages = sent.messages ?? [];
      const since = messages.slice(messages.findLastIndex((message) => message.role === "assistant") + 1);
      const blocks = since.flatMap((message) => (Array.isArray(message.content) ? (message.content as Block[]) : []));
      const results = blocks
        .filter((block) => block.type === "tool_result")
        .map((block) => ({ tool: this.used.get(block.tool_use_id ?? "") ?? "", text: resultText(block.content) }));
      const said = messages.findLast((message) => message.role === "user" && textOf(message.content) !== "");
      const seen = { tools, results, prompt: said ? textOf(said.content) : "" };
      this.requests.push(seen);
      turn = await this.script(seen);
    }
    answer(response, sent.model ?? "stand-in", sent.stream === true, this.block(turn));
  }

  private block(turn: ModelTurn): Block & Record<string, unknown> {
    if ("text" in turn) return { type: "text", text: turn.text };
    const id = `toolu_${this.used.size + 1}`;
    this.used.set(id, turn.use);
    return { type: "tool_use", id, name: turn.use, input: turn.input };
  }
}

/** The text blocks of a message's content (tool results left out). */
function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return (content as Block[])
    .filter((block) => block.type === "text")
    .map((block) => block.text ?? "")
    .join("\n");
}

function resultText(content: Block["content"]): string {
  if (typeof content === "string") return content;
  return (content ?? []).map((part) => part.text ?? "").join("");
}

/** One assistant message with one content block, whole or as the Messages API's event stream. */
function answer(response: ServerResponse, model: string, stream: boolean, block: Block & Record<string, unknown>): void {
  const stop = block.type === "tool_use" ? "tool_use" : "end_turn";
  const usage = { input_tokens: 1, output_tokens: 1 };
  const message = {
    id: "msg_stand_in",
    type: "message",
    role: "assistant",
    model,
    content: [] as unknown[],
    stop_reason: null,
    stop_sequence: null,
    usage,
  };
  if (!stream) {
    response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ ...message, content: [block], stop_reason: stop }));
    return;
  }
  response.writeHead(200, { "content-type": "text/event-stream" });
  const send = (type: string, data: Record<string, unknown>) => response.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
  send("message_start", { message });
  if (block.type === "text") {
    send("content_block_start", { index: 0, content_block: { type: "text", text: "" } });
    send("content_block_delta", { index: 0, delta: { type: "text_delta", text: block.text } });
  } else {
    send("content_block_start", { index: 0, content_block: { ...block, input: {} } });
    send("content_block_delta", { index: 0, delta: { type: "input_json_delta", partial_json: JSON.stringify(block.input) } });
  }
  send("content_block_stop", { index: 0 });
  send("message_delta", { delta: { stop_reason: stop, stop_sequence: null }, usage });
  send("message_stop", {});
  response.end();
}
