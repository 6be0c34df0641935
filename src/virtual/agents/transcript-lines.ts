// Owns how an agent's `session/update` notifications read in a session's transcript: streamed text joined into lines,
// tool calls with their status and diffs, plans, each line tagged with what it is.
import type * as acp from "@agentclientprotocol/sdk";
import type { Transcript } from "../goose/transcript.js";
import { oneLine } from "../goose/format.js";

/** Lines of a diff shown in a transcript; the rest are counted. */
const DIFF_LINES = 40;

/** What a streamed chunk continues: the same kind continues the open line, another kind starts a new one. */
export type StreamKind = "agent" | "thought" | "user";

export class TranscriptWriter {
  private streaming: StreamKind | undefined;
  /** The message the open streamed line belongs to, when the agent names its messages. */
  private messageId: string | undefined;
  /** Agent message text of the turn now running: dispatch_agent's answer. */
  private answerParts: string[] = [];
  private answerBytes = 0;

  constructor(
    readonly transcript: Transcript,
    private readonly maxAnswerBytes: number,
  ) {}

  /** A line gaggle writes itself (a turn starts or ends, a permission was answered). */
  note(tag: string, text: string): void {
    this.close();
    this.transcript.line(`[${tag}] ${text}`);
  }

  /** A new turn: its prompt, and a fresh answer. */
  prompt(number: number, text: string): void {
    this.answerParts = [];
    this.answerBytes = 0;
    this.note(`prompt ${number}`, text);
  }

  get answer(): string {
    return this.answerParts.join("");
  }

  update(update: acp.SessionUpdate): void {
    switch (update.sessionUpdate) {
      case "agent_message_chunk":
        return this.stream("agent", update);
      case "agent_thought_chunk":
        return this.stream("thought", update);
      case "user_message_chunk":
        return this.stream("user", update);
      case "tool_call":
        return this.note(
          "tool",
          `${update.title} (${update.kind ?? "other"}, ${update.status ?? "pending"}) #${update.toolCallId}${this.contentText(update.content)}`,
        );
      case "tool_call_update": {
        const title = update.title ? ` ${update.title}` : "";
        return this.note("tool", `#${update.toolCallId}${title}: ${update.status ?? "updated"}${this.contentText(update.content ?? undefined)}`);
      }
      case "plan":
        return this.note("plan", update.entries.map((entry) => `\n  [${entry.status}] ${entry.content}`).join(""));
      case "current_mode_update":
        return this.note("mode", update.currentModeId);
      case "session_info_update":
        return update.title ? this.note("title", update.title) : undefined;
      default:
        // Commands offered, config options, usage: state of the agent's UI, not of the conversation.
        return undefined;
    }
  }

  /** Ends the open streamed line, so that what comes next starts a line of its own. */
  close(): void {
    if (this.streaming !== undefined) this.transcript.close();
    this.streaming = undefined;
  }

  private stream(kind: StreamKind, { content, messageId }: acp.ContentChunk): void {
    const text = content.type === "text" ? content.text : `(${content.type})`;
    // A chunk of another message than the open line's (a named one, or an unnamed notice after a named one) is a
    // message of its own, even of the same kind.
    const another = (messageId ?? undefined) !== this.messageId;
    this.messageId = messageId ?? undefined;
    if (this.streaming !== kind || another) {
      // Each message of the answer on a line of its own.
      if (kind === "agent" && this.answerBytes > 0) this.keep("\n");
      this.transcript.close();
      this.transcript.stream(`[${kind}] `);
      this.streaming = kind;
    }
    this.transcript.stream(text);
    if (kind === "agent") this.keep(text);
  }

  private keep(text: string): void {
    if (this.answerBytes >= this.maxAnswerBytes) return;
    const kept = text.slice(0, this.maxAnswerBytes - this.answerBytes);
    this.answerParts.push(kept);
    this.answerBytes += kept.length;
  }

  private contentText(content: acp.ToolCallContent[] | undefined): string {
    if (!content) return "";
    return content
      .map((item) => {
        if (item.type === "diff") return `\n${diffText(item)}`;
        if (item.type === "terminal") return `\n  terminal ${item.terminalId}`;
        return item.content.type === "text" ? `\n  ${oneLine(item.content.text, 400)}` : `\n  (${item.content.type})`;
      })
      .join("");
  }
}

function diffText(diff: acp.Diff): string {
  const before = diff.oldText == null ? [] : diff.oldText.split("\n");
  const after = diff.newText.split("\n");
  const lines = [
    `  diff ${diff.path}${diff.oldText == null ? " (new file)" : ""}`,
    ...before.map((line) => `  - ${line}`),
    ...after.map((line) => `  + ${line}`),
  ];
  if (lines.length <= DIFF_LINES + 1) return lines.join("\n");
  return [...lines.slice(0, DIFF_LINES + 1), `  … ${lines.length - DIFF_LINES - 1} more diff lines`].join("\n");
}
