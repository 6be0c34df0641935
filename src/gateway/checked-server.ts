// The SDK's Server, with a request whose params do not fit its method's schema refused as -32602, in a sentence.
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { getLiteralValue, getObjectShape, safeParse, type AnyObjectSchema, type SchemaOutput } from "@modelcontextprotocol/sdk/server/zod-compat.js";
import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js";
import {
  ErrorCode,
  type Notification,
  type Request,
  type Result,
  type ServerNotification,
  type ServerRequest,
  type ServerResult,
} from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { WireError } from "../shared/errors.js";
import { describeJson, valueAt } from "../shared/json.js";

/** A request handler as Server takes it. */
type Handler<T extends AnyObjectSchema> = (
  request: SchemaOutput<T>,
  extra: RequestHandlerExtra<ServerRequest | Request, ServerNotification | Notification>,
) => ServerResult | Result | Promise<ServerResult | Result>;

/**
 * The SDK parses a request against its handler's schema itself, and answers a misfit -32603 (its own fault) with
 * zod's issue list, as JSON, for a message. Here each handler is registered behind a schema that takes any params
 * of its method, and the handler's own schema is checked first: a misfit is the client's error, -32602, naming each
 * wrong param, what it must be and what was found. The handlers the Server registers in its constructor
 * (initialize) come through here too: a subclass's method is in place before the base constructor runs.
 */
export class CheckedServer extends Server {
  /** Set by the answer to initialize; no initializer, as a field's would run after the constructor registered initialize. */
  private negotiated?: string;

  /** The MCP version the session speaks, as initialize agreed it; undefined before. */
  get protocolVersion(): string | undefined {
    return this.negotiated;
  }

  override setRequestHandler<T extends AnyObjectSchema>(schema: T, handler: Handler<T>): void {
    const method = getLiteralValue(getObjectShape(schema)!.method!) as string;
    super.setRequestHandler(z.looseObject({ method: z.literal(method) }), (request, extra) => {
      const parsed = safeParse(schema, request);
      if (!parsed.success) throw new WireError(ErrorCode.InvalidParams, paramsProblem(request, parsed.error));
      const answer = handler(parsed.data as SchemaOutput<T>, extra);
      return method === "initialize" ? this.agreed(answer) : answer;
    });
  }

  /** Keeps the version the server's answer to initialize names: the SDK's Server keeps it nowhere it can be read. */
  private async agreed(answer: ServerResult | Result | Promise<ServerResult | Result>): Promise<ServerResult | Result> {
    const result = await answer;
    if ("protocolVersion" in result && typeof result.protocolVersion === "string") this.negotiated = result.protocolVersion;
    return result;
  }
}

/** What zod says of one misfit (v4's issue shape), as far as a sentence needs it. */
interface Issue {
  code: string;
  path: PropertyKey[];
  message: string;
  expected?: string;
  values?: unknown[];
  errors?: Issue[][];
}

/** Every misfit as `params.x must be <what>; found <value>`, in sentences. */
function paramsProblem(request: unknown, error: unknown): string {
  const issues = ((error as { issues?: Issue[] }).issues ?? []).flatMap((issue) => flatten(issue, []));
  if (issues.length === 0) return `the request does not fit its method's schema: ${String(error)}`;
  return issues.map((issue) => `${pathText(issue.path)} ${mustBe(issue)}; found ${describeJson(valueAt(request, issue.path))}`).join(". ");
}

/**
 * A union's misfit read as the branch it came nearest (fewest issues); a field every branch wants a different
 * constant in (a discriminator such as ref's "type") reads as one choice among them.
 */
function flatten(issue: Issue, base: PropertyKey[]): Issue[] {
  const path = [...base, ...issue.path];
  const branches = issue.code === "invalid_union" ? (issue.errors ?? []) : [];
  if (branches.length === 0) return [{ ...issue, path }];
  const choices = branches.map((branch) => branch.find((inner) => inner.code === "invalid_value" && inner.path.length === 1));
  const key = choices[0]?.path[0];
  if (choices.every((choice) => choice !== undefined && choice.path[0] === key)) {
    return [{ code: "invalid_value", path: [...path, key!], message: "", values: choices.flatMap((choice) => choice!.values ?? []) }];
  }
  const nearest = branches.reduce((best, branch) => (branch.length < best.length ? branch : best));
  return nearest.flatMap((inner) => flatten(inner, path));
}

function mustBe(issue: Issue): string {
  if (issue.code === "invalid_type" && issue.expected) return `must be ${TYPE_NAMES[issue.expected] ?? `a ${issue.expected}`}`;
  const values = issue.values ?? [];
  if (issue.code === "invalid_value" && values.length === 1) return `must be ${JSON.stringify(values[0])}`;
  if (issue.code === "invalid_value") return `must be one of ${values.map((value) => JSON.stringify(value)).join(", ")}`;
  return `is wrong: ${issue.message}`;
}

const TYPE_NAMES: Record<string, string> = {
  string: "a string",
  number: "a number",
  int: "an integer",
  boolean: "a boolean",
  object: "an object",
  record: "an object",
  array: "an array",
};

/** `params.ref.name`, `params.items[0]`, `params._meta["io.x/y"]`. */
function pathText(path: PropertyKey[]): string {
  return path
    .map((key, index) => {
      if (typeof key === "number") return `[${key}]`;
      const name = String(key);
      if (/^[A-Za-z_$][\w$]*$/.test(name)) return index === 0 ? name : `.${name}`;
      return `[${JSON.stringify(name)}]`;
    })
    .join("");
}
