// Owns reading what one `goose run` prints (stream-json events, or plain text) into transcript lines and turn facts.
import { isObject } from "../../shared/json.js";
import { oneLine } from "./format.js";
import type { Transcript } from "./transcript.js";

/** What a turn's output said about the turn itself. */
export interface TurnFacts {
  /** stream-json: a `complete` event arrived. */
  complete: boolean;
  /** `complete.total_tokens`: Goose's token count for the session; null when Goose did not know it. */
  tokens: number | null | undefined;
  /** `error` events, in order. */
  errors: string[];
  /** JSON events read: proof that Goose got as far as running the session. */
  events: number;
  /** The last assistant text (stream-json), or everything printed (text): dispatch_agent's answer. */
  answer: string;
}

export interface OutputReader {
  read(line: string): void;
  finish(): TurnFacts;
}

/** How much of one tool call, tool result or thought a summary line keeps. */
const SUMMARY_CHARS = 200;

type Json = Record<string, unknown>;

export class StreamJsonReader implements OutputReader {
  private readonly facts: TurnFacts = { complete: false, tokens: undefined, errors: [], events: 0, answer: "" };
  /** Goose streams one assistant message as several `message` events sharing an id: their text joins up. */
  private streamingId: string | undefined;
  private answerId: string | undefined;

  constructor(
    private readonly transcript: Transcript,
    /** Hears each systemNotification's text, e.g. Goose's "Exceeded auto-compact threshold ..." notice. */
    private readonly onNotice: (text: string) => void = () => {},
  ) {}

  read(line: string): void {
    const event = parseObject(line);
    if (!event || typeof event.type !== "string") {
      this.endStreaming();
      this.transcript.line(line);
      return;
    }
    this.facts.events++;
    if (event.type === "message" && isObject(event.message)) return this.message(event.message);
    this.endStreaming();
    switch (event.type) {
      case "notification":
        return this.notification(event);
      case "model_change":
        return this.transcript.line(`[model] ${str(event.model)} (${str(event.mode)})`);
      case "error":
        this.facts.errors.push(str(event.error));
        return this.transcript.line(`[error] ${str(event.error)}`);
      case "complete":
        this.facts.complete = true;
        this.facts.tokens = typeof event.total_tokens === "number" ? event.total_tokens : null;
        return;
      default:
        return this.transcript.line(`[${event.type}] ${summary(JSON.stringify(event))}`);
    }
  }

  finish(): TurnFacts {
    this.endStreaming();
    this.facts.answer = this.facts.answer.trim();
    return this.facts;
  }

  private message(message: Json): void {
    const role = str(message.role);
    const id = typeof message.id === "string" ? message.id : undefined;
    const items = Array.isArray(message.content) ? message.content.filter(isObject) : [];
    for (const item of items) {
      if (item.type === "text" && role === "assistant") {
        this.assistantText(id, str(item.text));
        continue;
      }
      this.endStreaming();
      this.transcript.line(describe(item, role));
      if (item.type === "systemNotification") this.onNotice(str(item.msg));
    }
  }

  private assistantText(id: string | undefined, text: string): void {
    const continues = id !== undefined && id === this.streamingId;
    if (continues) this.transcript.stream(text);
    else {
      this.transcript.close();
      this.transcript.stream(text);
    }
    this.streamingId = id;
    if (continues || (id !== undefined && id === this.answerId)) this.facts.answer += text;
    else this.facts.answer = text;
    this.answerId = id;
  }

  private endStreaming(): void {
    this.streamingId = undefined;
    this.transcript.close();
  }

  private notification(event: Json): void {
    const source = str(event.extension_id);
    if (isObject(event.log)) return this.transcript.line(`[log ${source}] ${str(event.log.message)}`);
    if (isObject(event.progress)) {
      const { progress, total, message } = event.progress;
      const of = typeof total === "number" ? `/${total}` : "";
      return this.transcript.line(`[progress ${source}] ${str(progress)}${of}${message ? ` ${str(message)}` : ""}`);
    }
    this.transcript.line(`[notification ${source}] ${summary(JSON.stringify(event))}`);
  }
}

/** output_format = "text": Goose's own rendering, kept line by line; the turn ends when the process exits. */
export class TextReader implements OutputReader {
  private readonly printed: string[] = [];

  constructor(private readonly transcript: Transcript) {}

  read(line: string): void {
    const clean = stripAnsi(line);
    this.transcript.line(clean);
    this.printed.push(clean);
  }

  finish(): TurnFacts {
    return { complete: true, tokens: undefined, errors: [], events: 0, answer: this.printed.join("\n").trim() };
  }
}

/** One summary line for a content item that is not assistant text. */
function describe(item: Json, role: string): string {
  switch (item.type) {
    case "text":
      return `[${role || "message"}] ${str(item.text)}`;
    case "toolRequest":
    case "frontendToolRequest":
      return toolCall(item.toolCall);
    case "toolResponse":
      return toolResult(item.toolResult);
    case "thinking":
      return `[thinking] ${summary(str(item.thinking))}`;
    case "redactedThinking":
      return "[thinking] (redacted)";
    case "systemNotification":
      return `[${item.notificationType === "thinkingMessage" ? "status" : "notice"}] ${str(item.msg)}`;
    case "image":
      return `[image ${str(item.mimeType)}]`;
    case "toolConfirmationRequest":
      return `[confirmation needed] ${str(item.toolName)}`;
    case "actionRequired": {
      const data = isObject(item.data) ? item.data : {};
      return `[action required] ${str(data.actionType)} ${str(data.toolName ?? data.message)}`.trimEnd();
    }
    default:
      return `[${str(item.type)}]`;
  }
}

function toolCall(call: unknown): string {
  if (!isObject(call)) return "[tool] (unreadable call)";
  if (call.status === "error") return `[tool error] invalid call: ${str(call.error)}`;
  const value = isObject(call.value) ? call.value : {};
  return `[tool] ${str(value.name)} ${summary(JSON.stringify(value.arguments ?? {}))}`;
}

/** Current Goose sends `{content, isError}`; older versions a bare array of content. */
function toolResult(result: unknown): string {
  if (!isObject(result)) return "[tool result] (unreadable result)";
  if (result.status === "error") return `[tool error] ${summary(str(result.error))}`;
  const value = result.value;
  const content = Array.isArray(value) ? value : isObject(value) && Array.isArray(value.content) ? value.content : [];
  const failed = isObject(value) && value.isError === true;
  const parts = content.filter(isObject).map((item) => (item.type === "text" ? str(item.text) : `[${str(item.type)}]`));
  const text = parts.join("\n");
  const lines = text === "" ? 0 : text.split("\n").length;
  const shown = text.trim() === "" ? "(no output)" : summary(text);
  return `[tool ${failed ? "error" : "result"}] ${shown}${lines > 1 ? ` (${lines} lines)` : ""}`;
}

function parseObject(line: string): Json | undefined {
  if (!line.startsWith("{")) return undefined;
  try {
    const value: unknown = JSON.parse(line);
    return isObject(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

function str(value: unknown): string {
  if (value === undefined || value === null) return "";
  return typeof value === "string" ? value : JSON.stringify(value);
}

/** A transcript summary of an event or a tool call: one line of at most SUMMARY_CHARS. */
function summary(text: string): string {
  return oneLine(text, SUMMARY_CHARS);
}

// eslint-disable-next-line no-control-regex
const ANSI = /\u001b\[[0-9;?]*[ -/]*[@-~]|\u001b\][^\u0007]*(\u0007|\u001b\\)/g;

export function stripAnsi(text: string): string {
  return text.replace(ANSI, "");
}
