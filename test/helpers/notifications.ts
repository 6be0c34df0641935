// Records the log messages and resource updates a client hears, for tests of notices sent without asking.
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import {
  LoggingMessageNotificationSchema,
  ResourceUpdatedNotificationSchema,
  type LoggingMessageNotification,
} from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";

export interface Heard {
  logs: LoggingMessageNotification["params"][];
  updated: string[];
  /** Claude Code channel events (notifications/claude/channel). */
  channels: Array<{ content: string; meta: Record<string, string> }>;
}

const ChannelNotificationSchema = z.object({
  method: z.literal("notifications/claude/channel"),
  params: z.object({ content: z.string(), meta: z.record(z.string(), z.string()) }),
});

export function listen(client: Client): Heard {
  const heard: Heard = { logs: [], updated: [], channels: [] };
  client.setNotificationHandler(ChannelNotificationSchema, (note) => void heard.channels.push(note.params));
  client.setNotificationHandler(LoggingMessageNotificationSchema, (note) => void heard.logs.push(note.params));
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (note) => void heard.updated.push(note.params.uri));
  return heard;
}
