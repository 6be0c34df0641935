// Enterprise-managed authorization (SEP-990): the person's sign-in at their organisation's identity provider
// stands for a sign-in at each MCP server. gaggle exchanges the person's ID token at the identity provider for an
// identity assertion grant (ID-JAG, RFC 8693 token exchange) meant for the child's authorization server, then
// presents that grant there (the JWT bearer grant, RFC 7523) for an access token. No browser is involved.
import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { EnterpriseConfig } from "../../config/index.js";

export const JWT_BEARER_GRANT = "urn:ietf:params:oauth:grant-type:jwt-bearer";

/** What the grant is for: the authorization server's issuer, and the child as a resource. */
export interface GrantTarget {
  audience: string;
  resource: string;
  scope?: string | undefined;
}

/** The ID-JAG for `target`; throws with the identity provider's own words when it refuses. */
export async function identityAssertionGrant(config: EnterpriseConfig, target: GrantTarget, fetchFn: FetchLike = fetch): Promise<string> {
  const body = new URLSearchParams({
    grant_type: "urn:ietf:params:oauth:grant-type:token-exchange",
    requested_token_type: "urn:ietf:params:oauth:token-type:id-jag",
    subject_token: config.idToken,
    subject_token_type: "urn:ietf:params:oauth:token-type:id_token",
    audience: target.audience,
    resource: target.resource,
    client_id: config.idpClientId,
    ...(config.idpClientSecret !== undefined && { client_secret: config.idpClientSecret }),
    ...(target.scope && { scope: target.scope }),
  });
  const response = await fetchFn(config.idpTokenEndpoint, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", accept: "application/json" },
    body,
  });
  const answer = (await response.json().catch(() => ({}))) as { access_token?: unknown; error?: unknown; error_description?: unknown };
  if (response.ok && typeof answer.access_token === "string") return answer.access_token;
  const said =
    typeof answer.error === "string"
      ? `${answer.error}${typeof answer.error_description === "string" ? `: ${answer.error_description}` : ""}`
      : `HTTP ${response.status}`;
  throw new Error(`the identity provider at ${config.idpTokenEndpoint} refused to exchange the ID token for a grant (${said})`);
}
