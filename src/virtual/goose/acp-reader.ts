// Owns reading one gosling turn over `goose acp` into its transcript and turn facts: the agents child's transcript
// lines for session/update, and how the prompt ended.
import type * as acp from "@agentclientprotocol/sdk";
import { TranscriptWriter } from "../agents/transcript-lines.js";
import type { TurnFacts } from "./stream-json.js";
import type { Transcript } from "./transcript.js";
import type { TurnReader } from "./turns.js";

export class AcpReader implements TurnReader {
  private readonly writer: TranscriptWriter;
  private readonly facts: TurnFacts = { complete: false, tokens: undefined, errors: [], events: 0, answer: "" };

  constructor(transcript: Transcript) {
    // The answer is kept up to the transcript's own cap.
    this.writer = new TranscriptWriter(transcript, transcript.maxBytes);
  }

  update(update: acp.SessionUpdate): void {
    this.facts.events++;
    this.writer.update(update);
  }

  /** A line gaggle writes itself, e.g. a permission question it refused. */
  note(text: string): void {
    this.writer.close();
    this.writer.transcript.line(text);
  }

  /** The prompt was answered: `end_turn` completes the turn, any other reason is its error. */
  ended(stopReason: acp.StopReason): void {
    this.facts.complete = true;
    if (stopReason !== "end_turn" && stopReason !== "cancelled") this.facts.errors.push(`the turn stopped: ${stopReason}`);
  }

  failed(problem: string): void {
    this.facts.errors.push(problem);
  }

  finish(): TurnFacts {
    this.writer.close();
    this.facts.answer = this.writer.answer.trim();
    return this.facts;
  }
}
