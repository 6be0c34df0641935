// Revoking a child's tokens at its authorization server (RFC 7009) when the user signs out.
import type { OAuthConfig } from "../../config/index.js";
import { errorMessage } from "../../shared/errors.js";
import type { StoredSignIn } from "./token-store.js";

/**
 * Revokes the refresh token, then the access token, authenticating as the client did. Resolves with what
 * happened, in words; never throws: the tokens are forgotten locally whatever the server says.
 */
export async function revokeTokens(stored: StoredSignIn, config: OAuthConfig | undefined): Promise<string> {
  const { tokens } = stored;
  if (!tokens) return "there were no tokens to revoke";
  const endpoint = (stored.discovery?.authorizationServerMetadata as { revocation_endpoint?: string } | undefined)?.revocation_endpoint;
  if (!endpoint) return "its authorization server offers no revocation (RFC 7009); the tokens are forgotten here only";
  const clientId = config?.clientId ?? stored.client?.client_id;
  const secret = config?.clientSecret ?? (stored.client as { client_secret?: string } | undefined)?.client_secret;
  const refused: string[] = [];
  const revoked: string[] = [];
  let lasting = false;
  for (const [token, hint] of [
    [tokens.refresh_token, "refresh_token"],
    [tokens.access_token, "access_token"],
  ] as const) {
    if (!token) continue;
    const body = new URLSearchParams({ token, token_type_hint: hint });
    const headers: Record<string, string> = { "content-type": "application/x-www-form-urlencoded" };
    if (secret !== undefined && clientId !== undefined) {
      headers.authorization = `Basic ${Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(secret)}`).toString("base64")}`;
    } else if (clientId !== undefined) body.set("client_id", clientId);
    try {
      const response = await fetch(endpoint, { method: "POST", headers, body });
      const text = response.ok ? "" : await response.text();
      // RFC 7009 lets a server decline some token types (self-contained JWT access tokens, say): those expire.
      if (response.ok) revoked.push(hint === "refresh_token" ? "refresh token" : "access token");
      else if (text.includes("unsupported_token_type")) lasting = true;
      else refused.push(`${hint}: HTTP ${response.status} ${text.slice(0, 200)}`);
    } catch (error) {
      refused.push(`${hint}: ${errorMessage(error)}`);
    }
  }
  const done = revoked.length > 0 ? `its ${revoked.join(" and ")} revoked at the authorization server` : "nothing revoked";
  const lastingNote = lasting ? " (its access token cannot be revoked there and lasts until it expires)" : "";
  const refusal = refused.length > 0 ? `; the authorization server refused the rest (${refused.join("; ")})` : "";
  return `${done}${lastingNote}${refusal}`;
}
