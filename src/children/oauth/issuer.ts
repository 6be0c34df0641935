// Which authorization server a child's sign-in belongs to, and the two checks that keep a sign-in from being
// steered to another one: the metadata must name the issuer it was fetched for (RFC 8414 §3.3), and the
// redirect's `iss` must name the same issuer (RFC 9207). Both compare strings exactly, as the RFCs say: a
// variant that only matches after URL normalization is another issuer.
import type { OAuthDiscoveryState } from "@modelcontextprotocol/sdk/client/auth.js";

/**
 * Throws when the authorization server metadata names another issuer than the one it was looked up for. An
 * issuer the child's protected-resource metadata named must match exactly; the origin gaggle falls back to for
 * a child without that metadata (2025-03-26 servers) is written with a trailing `/`, which may be left off.
 */
export function checkMetadataIssuer(discovery: OAuthDiscoveryState): void {
  const named = discovery.authorizationServerMetadata?.issuer;
  if (named === undefined) return;
  const expected = discovery.authorizationServerUrl;
  const fromResource = discovery.resourceMetadata?.authorization_servers?.includes(expected) === true;
  if (named === expected || (!fromResource && `${named}/` === expected)) return;
  throw new Error(
    `the authorization server metadata found for ${expected} names the issuer ${named}; ` +
      "gaggle does not use metadata whose issuer differs from the server it was fetched for (RFC 8414 section 3.3)",
  );
}

/**
 * The issuer the redirect of a sign-in must name, when it names one; `required` when the server said it always
 * does (`authorization_response_iss_parameter_supported`).
 */
export function expectedIssuer(discovery: OAuthDiscoveryState | undefined): ExpectedIssuer | undefined {
  if (discovery === undefined) return undefined;
  const metadata = discovery.authorizationServerMetadata as { issuer: string; authorization_response_iss_parameter_supported?: unknown } | undefined;
  return {
    issuer: metadata?.issuer ?? discovery.authorizationServerUrl,
    required: metadata?.authorization_response_iss_parameter_supported === true,
  };
}

export interface ExpectedIssuer {
  issuer: string;
  required: boolean;
}

/** Why a redirect's `iss` is refused (RFC 9207), or undefined when it is acceptable. */
export function issRefusal(iss: string | null, expected: ExpectedIssuer | undefined): string | undefined {
  if (iss === null) {
    return expected?.required
      ? `its authorization server (${expected.issuer}) always names itself in the redirect, and this one names no issuer`
      : undefined;
  }
  if (expected === undefined) return `the redirect names the issuer ${iss}, and gaggle knows no authorization server to compare it with`;
  if (iss !== expected.issuer) return `the redirect names the issuer ${iss}, not ${expected.issuer}, the server the sign-in was sent to`;
  return undefined;
}
