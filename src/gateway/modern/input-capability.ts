// Which client capability each kind of input request needs, and whether a modern client's envelope declares it.
import type { ClientCapabilities } from "@modelcontextprotocol/sdk/types.js";
import { isObject } from "../../shared/json.js";

export interface InputRequest {
  method: string;
  params?: Record<string, unknown> | undefined;
}

/**
 * The capability a client must have declared to be asked `request`, in the shape of -32021's
 * `data.requiredCapabilities`; undefined for a method no client capability covers.
 */
export function requiredCapability(request: InputRequest): ClientCapabilities | undefined {
  switch (request.method) {
    case "sampling/createMessage":
      return request.params?.tools !== undefined ? { sampling: { tools: {} } } : { sampling: {} };
    case "elicitation/create":
      return request.params?.mode === "url" ? { elicitation: { url: {} } } : { elicitation: { form: {} } };
    case "roots/list":
      return { roots: {} };
    default:
      return undefined;
  }
}

/** Whether `declared` covers `required`. A bare `elicitation: {}` declares form mode, as the specification says. */
export function declares(declared: ClientCapabilities, required: ClientCapabilities): boolean {
  for (const [name, needed] of Object.entries(required)) {
    const have = (declared as Record<string, unknown>)[name];
    if (!isObject(have)) return false;
    const features = Object.keys(needed as object);
    if (name === "elicitation" && features.length === 1 && features[0] === "form" && !("url" in have)) continue;
    if (features.some((feature) => !isObject(have[feature]))) return false;
  }
  return true;
}
