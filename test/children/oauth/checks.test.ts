// The checks that keep a sign-in with the authorization server it began with (RFC 8414 section 3.3, RFC 9207),
// and the scope arithmetic of step-up (SEP-2350).
import type { OAuthDiscoveryState } from "@modelcontextprotocol/sdk/client/auth.js";
import { describe, expect, it } from "vitest";
import { checkMetadataIssuer, expectedIssuer, issRefusal } from "../../../src/children/oauth/issuer.js";
import { coversScopes, unionOfScopes } from "../../../src/children/oauth/scopes.js";

const AS = "https://auth.example.com";
const metadata = (issuer: string, extra: Record<string, unknown> = {}) =>
  ({
    issuer,
    authorization_endpoint: `${issuer}/authorize`,
    token_endpoint: `${issuer}/token`,
    response_types_supported: ["code"],
    ...extra,
  }) as OAuthDiscoveryState["authorizationServerMetadata"];
const named = (authorizationServerUrl: string, issuer: string): OAuthDiscoveryState => ({
  authorizationServerUrl,
  resourceMetadata: { resource: "https://mcp.example.com/mcp", authorization_servers: [authorizationServerUrl] },
  authorizationServerMetadata: metadata(issuer),
});

describe("the issuer of the authorization server metadata", () => {
  it("is accepted when it is the server the child's metadata names, exactly", () => {
    expect(() => checkMetadataIssuer(named(AS, AS))).not.toThrow();
  });

  it("is refused when it names another server, saying which and why", () => {
    expect(() => checkMetadataIssuer(named(AS, "https://attacker.example.com"))).toThrow(
      "the authorization server metadata found for https://auth.example.com names the issuer https://attacker.example.com; " +
        "gaggle does not use metadata whose issuer differs from the server it was fetched for (RFC 8414 section 3.3)",
    );
  });

  it("is refused when it differs only by a trailing slash from the issuer the child named", () => {
    expect(() => checkMetadataIssuer(named(AS, `${AS}/`))).toThrow(/names the issuer https:\/\/auth\.example\.com\//);
  });

  it("may leave off the slash of the origin gaggle falls back to for a child without resource metadata", () => {
    expect(() => checkMetadataIssuer({ authorizationServerUrl: `${AS}/`, authorizationServerMetadata: metadata(AS) })).not.toThrow();
  });
});

describe("the iss of the redirect (RFC 9207)", () => {
  const advertised = expectedIssuer({
    authorizationServerUrl: AS,
    authorizationServerMetadata: metadata(AS, { authorization_response_iss_parameter_supported: true }),
  });
  const silent = expectedIssuer({ authorizationServerUrl: AS, authorizationServerMetadata: metadata(AS) });

  it("must be the metadata's issuer, compared exactly", () => {
    expect(advertised).toEqual({ issuer: AS, required: true });
    expect(issRefusal(AS, advertised)).toBeUndefined();
    expect(issRefusal("https://evil.example.com", advertised)).toBe(
      "the redirect names the issuer https://evil.example.com, not https://auth.example.com, the server the sign-in was sent to",
    );
    expect(issRefusal(`${AS}/`, advertised)).toMatch(/names the issuer https:\/\/auth\.example\.com\/, not/);
  });

  it("must be there when the server says it always sends it, and may be missing when it does not", () => {
    expect(issRefusal(null, advertised)).toBe(
      "its authorization server (https://auth.example.com) always names itself in the redirect, and this one names no issuer",
    );
    expect(silent).toEqual({ issuer: AS, required: false });
    expect(issRefusal(null, silent)).toBeUndefined();
    expect(issRefusal("https://evil.example.com", silent)).toMatch(/not https:\/\/auth\.example\.com/);
  });

  it("is refused when gaggle knows no server to compare it with", () => {
    expect(issRefusal(AS, expectedIssuer(undefined))).toMatch(/gaggle knows no authorization server to compare it with/);
  });
});

describe("scopes", () => {
  it("a union keeps each scope once, in the order first seen", () => {
    expect(unionOfScopes("mcp:basic", undefined, "mcp:write mcp:basic", "")).toBe("mcp:basic mcp:write");
    expect(unionOfScopes(undefined, "")).toBeUndefined();
  });

  it("a grant covers what it names, and nothing covers a scope it lacks", () => {
    expect(coversScopes("mcp:basic mcp:write", "mcp:write")).toBe(true);
    expect(coversScopes("mcp:basic", "mcp:basic mcp:write")).toBe(false);
    expect(coversScopes(undefined, "mcp:basic")).toBe(false);
    expect(coversScopes(undefined, undefined)).toBe(true);
  });
});
