// The gateway's own resources: mcp://server_summary and mcp://children_servers.
import type { ReadResourceResult, Resource } from "@modelcontextprotocol/sdk/types.js";
import type { Router } from "../children/router.js";
import type { ChildConfig, GaggleConfig, OAuthConfig } from "../config/index.js";
import type { Gaggle } from "./gaggle.js";
import { GAGGLE_VERSION } from "../shared/version.js";
import { statusView } from "./meta/status-view.js";

export const GATEWAY_RESOURCES: Resource[] = [
  {
    uri: "mcp://server_summary",
    name: "server_summary",
    description: "Gateway summary: children, active sessions, connected clients, config path, version",
    mimeType: "application/json",
  },
  {
    uri: "mcp://children_servers",
    name: "children_servers",
    description: "Every child: status, transport, tool count, session and (redacted) config",
    mimeType: "application/json",
  },
];

const REDACTED = "[redacted]";

/**
 * Env values and header values may hold secrets: their keys are shown, never their values. So are the secrets
 * of a sign-in's config: client secrets, private keys, ID tokens.
 */
export function redactedChildConfig(config: ChildConfig) {
  const hide = (map: Record<string, string>) => Object.fromEntries(Object.keys(map).map((key) => [key, REDACTED]));
  return { ...config, env: hide(config.env), headers: hide(config.headers), ...(config.oauth && { oauth: redactedOAuth(config.oauth) }) };
}

function redactedOAuth(oauth: OAuthConfig): OAuthConfig {
  const { clientSecret, privateKey, enterprise } = oauth;
  return {
    ...oauth,
    ...(clientSecret !== undefined && { clientSecret: REDACTED }),
    ...(privateKey && { privateKey: { ...privateKey, pem: REDACTED } }),
    ...(enterprise && {
      enterprise: { ...enterprise, idToken: REDACTED, ...(enterprise.idpClientSecret !== undefined && { idpClientSecret: REDACTED }) },
    }),
  };
}

export function readGatewayResource(uri: string, gaggle: Gaggle): ReadResourceResult | undefined {
  const { router, config } = gaggle;
  const body =
    uri === "mcp://server_summary"
      ? { ...summary(router, config), connected_clients: gaggle.hub.clients().length }
      : uri === "mcp://children_servers"
        ? children(router, config)
        : undefined;
  if (body === undefined) return undefined;
  return { contents: [{ uri, mimeType: "application/json", text: JSON.stringify(body, null, 2) }] };
}

function summary(router: Router, config: GaggleConfig) {
  const children = router.all();
  return {
    total_children: children.length,
    active_sessions: children.filter((child) => child.status().state === "running").length,
    config_path: config.path,
    version: GAGGLE_VERSION,
  };
}

function children(router: Router, config: GaggleConfig) {
  const configs = new Map(config.children.map((child) => [child.name, child]));
  return {
    children: router.all().map((child) => {
      const { server_id, status, transport, tool_count, ...session } = statusView(router.status(child.name));
      const childConfig = configs.get(child.name);
      return {
        name: server_id,
        status,
        transport,
        tool_count,
        session,
        config: childConfig ? redactedChildConfig(childConfig) : null,
      };
    }),
  };
}
