// The secrets a config holds that no child may see: the bearer tokens that tell principals apart, and OAuth secrets.
import type { GaggleConfig } from "./schema.js";

/** Each secret's text, as expanded from the environment. */
export function configSecrets(config: GaggleConfig): string[] {
  const { authToken, authTokens } = config.gateway;
  const secrets = [...(authToken === undefined ? [] : [authToken]), ...Object.values(authTokens ?? {})];
  for (const child of config.children) {
    const oauth = child.oauth;
    if (!oauth) continue;
    if (oauth.clientSecret !== undefined) secrets.push(oauth.clientSecret);
    if (oauth.privateKey) secrets.push(oauth.privateKey.pem);
    if (oauth.enterprise) {
      secrets.push(oauth.enterprise.idToken);
      if (oauth.enterprise.idpClientSecret !== undefined) secrets.push(oauth.enterprise.idpClientSecret);
    }
  }
  return secrets;
}

/**
 * The bearer tokens of the config and GAGGLE_AUTH_TOKEN (when the config sets no auth_token), by the principal each
 * names: what an HTTP listener serving this config takes.
 */
export function bearerTokens(config: GaggleConfig, env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const token = config.gateway.authToken ?? env.GAGGLE_AUTH_TOKEN;
  return { ...(token && { auth_token: token }), ...config.gateway.authTokens };
}
