// HTTP header values of the 2026-07-28 wire, and the tool parameters a server asks to see mirrored into headers
// (`x-mcp-header` in a tool's inputSchema: Mcp-Param-{Name}).
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { isObject } from "../../shared/json.js";

/**
 * A value as a header carries it: plain when it is visible ASCII (spaces inside) with no whitespace at either end
 * and does not look like the sentinel, else the UTF-8 bytes base64-encoded in the sentinel `=?base64?...?=`.
 */
export function headerValue(value: string): string {
  const plain = /^[\x20-\x7e]*$/.test(value) && value.trim() === value && !/^=\?base64\?.*\?=$/.test(value);
  return plain ? value : `=?base64?${Buffer.from(value, "utf8").toString("base64")}?=`;
}

/** One annotated parameter: where it sits in the arguments (a chain of `properties` keys) and its header's name part. */
export interface HeaderParam {
  path: string[];
  name: string;
}

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const HEADER_TYPES = new Set(["string", "integer", "boolean"]);
/** Keywords whose value maps names to subschemas: the map itself is no schema. */
const SCHEMA_MAPS = new Set(["properties", "$defs", "definitions", "patternProperties", "dependentSchemas"]);

const parsed = new WeakMap<object, HeaderParam[] | string>();

/**
 * The tool's header parameters, or why its annotations are invalid (then a client of HTTP must not list it):
 * each `x-mcp-header` must be a non-empty token, unique regardless of case, on a string, integer or boolean
 * property reached from the root through `properties` keys only.
 */
export function headerParamsOf(tool: Tool): HeaderParam[] | string {
  const known = parsed.get(tool.inputSchema);
  if (known !== undefined) return known;
  const found = readHeaderParams(tool.inputSchema);
  parsed.set(tool.inputSchema, found);
  return found;
}

function readHeaderParams(schema: unknown): HeaderParam[] | string {
  const params: HeaderParam[] = [];
  const problems: string[] = [];
  const visit = (node: Record<string, unknown>, path: string[]) => {
    if ("x-mcp-header" in node) {
      const name = node["x-mcp-header"];
      const where = path.join(".");
      if (typeof name !== "string" || !TOKEN.test(name))
        problems.push(`x-mcp-header of ${where} is not a header name token: ${JSON.stringify(name)}`);
      else if (typeof node.type !== "string" || !HEADER_TYPES.has(node.type))
        problems.push(`${where} carries x-mcp-header but is not a string, integer or boolean`);
      else if (params.some((param) => param.name.toLowerCase() === name.toLowerCase())) problems.push(`x-mcp-header "${name}" is used twice`);
      else params.push({ path, name });
    }
    if (isObject(node.properties)) for (const [key, child] of Object.entries(node.properties)) if (isObject(child)) visit(child, [...path, key]);
  };
  if (!isObject(schema)) return params;
  if (isObject(schema.properties)) for (const [key, child] of Object.entries(schema.properties)) if (isObject(child)) visit(child, [key]);
  if (problems.length > 0) return problems.join("; ");
  const annotated = countAnnotations(schema, true);
  if (annotated > params.length) return "an x-mcp-header sits outside the chain of properties from the schema's root";
  return params;
}

/** Every `x-mcp-header` anywhere in the schema. */
function countAnnotations(node: unknown, isSchema: boolean): number {
  if (Array.isArray(node)) return node.reduce((sum: number, item) => sum + countAnnotations(item, true), 0);
  if (!isObject(node)) return 0;
  let count = isSchema && "x-mcp-header" in node ? 1 : 0;
  for (const [key, value] of Object.entries(node)) {
    if (key === "x-mcp-header") continue;
    count += countAnnotations(value, !(isSchema && SCHEMA_MAPS.has(key)));
  }
  return count;
}

/** The Mcp-Param headers of a call with `args`: a parameter with no value (or null) sends none. */
export function paramHeaders(params: HeaderParam[], args: unknown): Array<[string, string]> {
  const headers: Array<[string, string]> = [];
  for (const { path, name } of params) {
    let value: unknown = args;
    for (const key of path) value = isObject(value) ? value[key] : undefined;
    const text =
      typeof value === "string"
        ? headerValue(value)
        : typeof value === "boolean" || (typeof value === "number" && Number.isSafeInteger(value))
          ? String(value)
          : undefined;
    if (text !== undefined) headers.push([`mcp-param-${name}`, text]);
  }
  return headers;
}
