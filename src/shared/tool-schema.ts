// Owns turning a tool's zod argument schema into the input schema clients see and the router's ajv checks calls against.
import { z } from "zod";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";

/**
 * The input-side JSON Schema of `schema`, without its `$schema` dialect line. The handler's argument type is
 * `z.input<typeof schema>`: what the router's check lets through, before any zod default or transform.
 */
export function toolInputSchema(schema: z.ZodObject): Tool["inputSchema"] {
  const { $schema: _dialect, ...json } = z.toJSONSchema(schema, { io: "input" }) as Record<string, unknown>;
  return { ...json, type: "object" };
}
