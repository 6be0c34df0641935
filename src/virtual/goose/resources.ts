// Owns the goslings:// resources: the list, one gosling's details, and its transcript as text.
import type { ReadResourceResult, Resource, ResourceTemplate } from "@modelcontextprotocol/sdk/types.js";
import type { CallContext } from "../../children/child.js";
import { excerpt } from "./format.js";
import type { Gosling } from "./gosling.js";
import { outputView } from "./output-view.js";
import type { GooseSettings } from "../../config/virtual/goose.js";
import { goslingJson } from "./status-view.js";

export const LIST_URI = "goslings://list";

interface ResourceOwner {
  readonly settings: GooseSettings;
  visibleTo(ctx: CallContext): Gosling[];
  find(processId: string, ctx: CallContext): Gosling;
}

export function gooseResources(goslings: readonly Gosling[]): Resource[] {
  return [
    {
      uri: LIST_URI,
      name: "goslings",
      description: "The goslings you may see: status, activity, runtime, tokens, first prompt",
      mimeType: "application/json",
    },
    ...goslings.flatMap((gosling): Resource[] => [
      {
        uri: `goslings://${gosling.id}`,
        name: `gosling ${gosling.id.slice(0, 8)}`,
        description: `Gosling for ${excerpt(gosling.prompts[0]?.text ?? "", 50)}`,
        mimeType: "application/json",
      },
      {
        uri: `goslings://${gosling.id}/output`,
        name: `gosling ${gosling.id.slice(0, 8)} output`,
        description: "Its whole transcript, with a header",
        mimeType: "text/plain",
      },
    ]),
  ];
}

export function gooseResourceTemplates(): ResourceTemplate[] {
  return [
    { uriTemplate: "goslings://{process_id}", name: "gosling", description: "One gosling's details and prompts", mimeType: "application/json" },
    { uriTemplate: "goslings://{process_id}/output", name: "gosling output", description: "One gosling's transcript", mimeType: "text/plain" },
  ];
}

/** undefined when the URI is not a goslings:// one, or names no gosling the caller may see. */
export function readGooseResource(owner: ResourceOwner, uri: string, ctx: CallContext): ReadResourceResult | undefined {
  if (uri === LIST_URI) {
    const list = owner.visibleTo(ctx).map((gosling) => goslingJson(gosling, false));
    return { contents: [{ uri, mimeType: "application/json", text: JSON.stringify(list, null, 2) }] };
  }
  const match = /^goslings:\/\/([^/]+)(\/output)?$/.exec(uri);
  if (!match) return undefined;
  let gosling: Gosling;
  try {
    gosling = owner.find(match[1]!, ctx);
  } catch {
    return undefined;
  }
  if (match[2]) {
    const text = outputView(gosling, { offset: 0, limit: 0, full: true }, owner.settings);
    return { contents: [{ uri, mimeType: "text/plain", text }] };
  }
  return { contents: [{ uri, mimeType: "application/json", text: JSON.stringify(goslingJson(gosling, true), null, 2) }] };
}
