// Records the log messages and resource updates a client hears, for tests of notices sent without asking.
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import {
  LoggingMessageNotificationSchema,
  ResourceUpdatedNotificationSchema,
  type LoggingMessageNotification,
} from "@modelcontextprotocol/sdk/types.js";

export interface Heard {
  logs: LoggingMessageNotification["params"][];
  updated: string[];
}

export function listen(client: Client): Heard {
  const heard: Heard = { logs: [], updated: [] };
  client.setNotificationHandler(LoggingMessageNotificationSchema, (note) => void heard.logs.push(note.params));
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (note) => void heard.updated.push(note.params.uri));
  return heard;
}
