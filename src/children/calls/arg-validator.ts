// Checks call arguments against a tool's input schema before anything reaches the child.
import { Ajv, type ValidateFunction, type ErrorObject } from "ajv";
import { Ajv2020 } from "ajv/dist/2020.js";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { errorMessage } from "../../shared/errors.js";
import { valueAt } from "../../shared/json.js";
import { logger } from "../../shared/log.js";

// The child is the authority on its own schema: unknown keywords and formats are tolerated rather than refused.
// `addUsedSchema: false`: a compiled schema is not registered under its `$id`. Registered, a second schema with
// the same `$id` (another child's, or the same tool's after its list was refreshed) would fail to compile, and
// one tool's schema could resolve a `$ref` to another's.
const options = { strict: false, allErrors: true, validateFormats: false, addUsedSchema: false } as const;
const draft07 = new Ajv(options);
const draft2020 = new Ajv2020(options);

/** A schema that does not compile: every call of its tool is refused with this reason, since none can be checked. */
interface Unreadable {
  reason: string;
}

/**
 * Compiled once per tool definition. Keyed by the definition object itself, so a refreshed tool list
 * (new objects) drops the old validators with it.
 */
const validators = new WeakMap<Tool, ValidateFunction | Unreadable>();

function compile(tool: Tool): ValidateFunction | Unreadable {
  const schema = tool.inputSchema as Record<string, unknown>;
  const dialect = typeof schema.$schema === "string" ? schema.$schema : "";
  const ajv = /draft-0[467]/.test(dialect) ? draft07 : draft2020;
  try {
    return ajv.compile(schema);
  } catch (error) {
    const reason = errorMessage(error);
    logger({ subsystem: "validate" }).warn({ tool: tool.name, reason }, "input schema does not compile; calls of this tool are refused");
    return { reason };
  } finally {
    // The validator lives on in `validators` as long as its tool; Ajv's own cache would keep every schema forever.
    ajv.removeSchema(schema);
  }
}

/**
 * Returns a description of every problem, or undefined when the arguments fit. A tool whose schema does not
 * compile takes no arguments at all: what its schema allows cannot be known, so the problem is the schema's.
 */
export function checkArguments(tool: Tool, args: unknown): string | undefined {
  let validate = validators.get(tool);
  if (validate === undefined) {
    validate = compile(tool);
    validators.set(tool, validate);
  }
  if (typeof validate !== "function")
    return `the tool's input schema does not compile, so no arguments can be checked against it: ${validate.reason}`;
  if (validate(args)) return undefined;
  return (validate.errors ?? []).map((error) => describe(error, args)).join("; ");
}

function describe(error: ErrorObject, args: unknown): string {
  const where = error.instancePath === "" ? "arguments" : `arguments${error.instancePath.replace(/\//g, ".")}`;
  const params = error.params as Record<string, unknown>;
  if (error.keyword === "type") {
    const types = Array.isArray(params.type) ? params.type.map(String) : [String(params.type)];
    return `${where}: must be ${types.join(" or ")}, got ${received(valueAt(args, pointerTokens(error.instancePath)))}`;
  }
  if (error.keyword === "additionalProperties") return `${where}: unexpected property "${String(params.additionalProperty)}"`;
  if (error.keyword === "required") return `${where}: missing required property "${String(params.missingProperty)}"`;
  if (error.keyword === "enum") return `${where}: ${error.message} (${JSON.stringify(params.allowedValues)})`;
  return `${where}: ${error.message ?? error.keyword}`;
}

/** The tokens of a JSON pointer (an error's instancePath), unescaped. */
function pointerTokens(pointer: string): string[] {
  return pointer
    .split("/")
    .slice(1)
    .map((token) => token.replace(/~1/g, "/").replace(/~0/g, "~"));
}

/** Longer strings are cut: an error names what came, it does not repeat it. */
const MAX_SHOWN_CHARS = 40;

/** What a value is, in JSON's words: `number 5`, `string "5"`, `null`, `an array`, `an object`. */
function received(value: unknown): string {
  if (value === null) return "null";
  if (value === undefined) return "nothing";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "object") return "an object";
  if (typeof value === "string") {
    const shown = JSON.stringify(value);
    return `string ${shown.length <= MAX_SHOWN_CHARS ? shown : `${shown.slice(0, MAX_SHOWN_CHARS - 4)}..."`}`;
  }
  return `${typeof value} ${String(value)}`;
}
