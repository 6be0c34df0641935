// gateway.admin, [telemetry] and [audit] as the config file gives them, and the errors a bad value gets.
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigError, validateConfigText } from "../../src/config/index.js";
import { tracesWanted, TELEMETRY_DEFAULTS } from "../../src/config/observe.js";

const PATH = "/srv/gaggle/children_config.toml";
const load = (text: string) => validateConfigText(text, PATH, {});

function errorOf(text: string): string {
  try {
    load(text);
  } catch (error) {
    if (error instanceof ConfigError) return error.message;
    throw error;
  }
  throw new Error("the config loaded");
}

describe("gateway.admin", () => {
  it("takes HOST:PORT, PORT on loopback, or false", () => {
    expect(load('[gateway]\nadmin = "0.0.0.0:9464"').gateway.admin).toEqual({ host: "0.0.0.0", port: 9464 });
    expect(load('[gateway]\nadmin = "7311"').gateway.admin).toEqual({ host: "127.0.0.1", port: 7311 });
    expect(load("[gateway]\nadmin = false").gateway.admin).toBe(false);
    expect(load("").gateway.admin).toBeUndefined();
  });

  it("names what is wrong with an address that is none", () => {
    expect(errorOf('[gateway]\nadmin = "localhost:99999"')).toMatch(
      /gateway\.admin.*expected "HOST:PORT", "PORT" or "\[IPV6\]:PORT", got "localhost:99999"/s,
    );
    expect(errorOf("[gateway]\nadmin = 7311")).toMatch(/gateway\.admin.*expected "HOST:PORT", "PORT" or false, got/s);
  });
});

describe("[audit]", () => {
  it("defaults to no file and argument names only", () => {
    expect(load("").audit).toEqual({ path: undefined, arguments: "keys", maxBytes: 10 * 1024 * 1024, keep: 3 });
  });

  it("reads a relative path from the config file's folder", () => {
    const audit = load('[audit]\npath = "logs/audit.jsonl"\narguments = "hash"\nmax_bytes = 4096\nkeep = 0').audit;
    expect(audit).toEqual({ path: join("/srv/gaggle", "logs/audit.jsonl"), arguments: "hash", maxBytes: 4096, keep: 0 });
  });

  it("refuses an arguments mode it does not know, naming the four", () => {
    expect(errorOf('[audit]\narguments = "all"')).toMatch(/audit\.arguments.*"none", "keys", "hash", "full"/s);
    expect(errorOf("[audit]\nmax_bytes = 10")).toMatch(/audit\.max_bytes.*expected an integer >= 1024/s);
    expect(errorOf('[audit]\nfile = "x"')).toMatch(/audit\.file.*unknown key/s);
  });
});

describe("[telemetry]", () => {
  it("turns traces on with an endpoint in the table or the standard variables, and off when told", () => {
    const table = load('[telemetry]\nendpoint = "http://127.0.0.1:4318"').telemetry;
    expect(table.endpoint).toBe("http://127.0.0.1:4318");
    expect(tracesWanted(table, {})).toBe(true);
    expect(tracesWanted(TELEMETRY_DEFAULTS, {})).toBe(false);
    expect(tracesWanted(TELEMETRY_DEFAULTS, { OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318" })).toBe(true);
    expect(tracesWanted(TELEMETRY_DEFAULTS, { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://127.0.0.1:4318/v1/traces" })).toBe(true);
    expect(tracesWanted(table, { OTEL_SDK_DISABLED: "true" })).toBe(false);
    expect(tracesWanted(table, { OTEL_TRACES_EXPORTER: "none" })).toBe(false);
    expect(tracesWanted(load('[telemetry]\nendpoint = "http://127.0.0.1:4318"\nenabled = false').telemetry, {})).toBe(false);
  });

  it("refuses an endpoint that is no URL", () => {
    expect(errorOf('[telemetry]\nendpoint = "collector:4318"')).toMatch(/telemetry\.endpoint.*expected an http\(s\) URL/s);
  });
});
