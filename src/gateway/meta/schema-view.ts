// The JSON shape get_schema answers with: what an agent needs to call a tool, and nothing it does not.
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import type { ChildSchema } from "../../children/child.js";

export function toolView(tool: Tool) {
  return {
    name: tool.name,
    ...(tool.title && { title: tool.title }),
    ...(tool.description && { description: tool.description }),
    inputSchema: tool.inputSchema,
    ...(tool.outputSchema && { outputSchema: tool.outputSchema }),
    ...(tool.annotations && { annotations: tool.annotations }),
  };
}

export function schemaView(schema: ChildSchema) {
  return {
    tools: schema.tools.map(toolView),
    resources: schema.resources,
    resource_templates: schema.resourceTemplates,
    prompts: schema.prompts,
  };
}
