// An OAuth access token for Google Cloud from a credentials file, as Google's own clients get one: a service
// account key signs a JWT it trades at its token_uri; application-default credentials of a person (gcloud auth
// application-default login) trade their refresh token. Tokens are kept until shortly before they expire.
import { createSign } from "node:crypto";
import { readFile } from "node:fs/promises";
import { GaggleError, errorMessage, fetchFailure } from "../../shared/errors.js";
import { isObject } from "../../shared/json.js";

const SCOPE = "https://www.googleapis.com/auth/cloud-platform";
const GOOGLE_TOKEN_URI = "https://oauth2.googleapis.com/token";
/** A token this close to its expiry is fetched anew. */
const RENEW_BEFORE_MS = 60_000;

interface Cached {
  token: string;
  expiresAt: number;
}

export class GoogleCredentials {
  private cached: Cached | undefined;

  /** `file`: absolute; `setting` names where it came from, for errors. */
  constructor(
    private readonly file: string,
    private readonly setting: string,
  ) {}

  async accessToken(signal: AbortSignal): Promise<string> {
    if (this.cached && this.cached.expiresAt - RENEW_BEFORE_MS > Date.now()) return this.cached.token;
    const key = await this.read();
    const { tokenUri, form } = key.type === "service_account" ? serviceAccountGrant(key) : refreshGrant(key);
    const answer = await this.post(tokenUri, form, signal);
    this.cached = { token: answer.access_token, expiresAt: Date.now() + answer.expires_in * 1000 };
    return answer.access_token;
  }

  private async read(): Promise<Record<string, string>> {
    let parsed: unknown;
    try {
      parsed = JSON.parse(await readFile(this.file, "utf8"));
    } catch (error) {
      throw new GaggleError("PERMISSION_DENIED", `cannot read the Google credentials file ${this.file} (${this.setting}): ${errorMessage(error)}`, {
        hint: "create one with `gcloud auth application-default login`, or download a service account key",
      });
    }
    const fields = isObject(parsed) ? parsed : {};
    const needs = fields.type === "service_account" ? ["client_email", "private_key"] : ["client_id", "client_secret", "refresh_token"];
    const missing = needs.filter((name) => typeof fields[name] !== "string");
    if (missing.length > 0 || (fields.type !== "service_account" && fields.type !== "authorized_user")) {
      throw new GaggleError(
        "PERMISSION_DENIED",
        `${this.file} (${this.setting}) is not a service account key or application-default credentials: ` +
          (missing.length > 0 ? `it has no ${missing.join(", ")}` : `its type is ${JSON.stringify(fields.type)}`),
        { hint: "give a service account key (type service_account) or the file gcloud auth application-default login writes" },
      );
    }
    return fields as Record<string, string>;
  }

  private async post(uri: string, form: Record<string, string>, signal: AbortSignal): Promise<{ access_token: string; expires_in: number }> {
    let response: Response;
    try {
      response = await fetch(uri, { method: "POST", body: new URLSearchParams(form), signal });
    } catch (error) {
      const failure = fetchFailure(error);
      if (!failure) throw error;
      throw new GaggleError("SERVER_FAILED", `could not reach Google's token endpoint ${uri} (${failure.code ?? failure.message})`);
    }
    const body = (await response.json().catch(() => ({}))) as Record<string, unknown>;
    if (!response.ok || typeof body.access_token !== "string") {
      const why =
        typeof body.error_description === "string" ? body.error_description : typeof body.error === "string" ? body.error : `HTTP ${response.status}`;
      throw new GaggleError("PERMISSION_DENIED", `Google refused the credentials in ${this.file} (${this.setting}): ${why}`, {
        hint: "renew them (gcloud auth application-default login), or check the service account's key and roles",
      });
    }
    return { access_token: body.access_token, expires_in: typeof body.expires_in === "number" ? body.expires_in : 3600 };
  }
}

function serviceAccountGrant(key: Record<string, string>): { tokenUri: string; form: Record<string, string> } {
  const tokenUri = key.token_uri ?? GOOGLE_TOKEN_URI;
  const now = Math.floor(Date.now() / 1000);
  const part = (value: object) => Buffer.from(JSON.stringify(value)).toString("base64url");
  const unsigned = `${part({ alg: "RS256", typ: "JWT" })}.${part({ iss: key.client_email, scope: SCOPE, aud: tokenUri, iat: now, exp: now + 3600 })}`;
  const signature = createSign("RSA-SHA256").update(unsigned).sign(key.private_key!, "base64url");
  return { tokenUri, form: { grant_type: "urn:ietf:params:oauth:grant-type:jwt-bearer", assertion: `${unsigned}.${signature}` } };
}

function refreshGrant(key: Record<string, string>): { tokenUri: string; form: Record<string, string> } {
  return {
    tokenUri: key.token_uri ?? GOOGLE_TOKEN_URI,
    form: { grant_type: "refresh_token", client_id: key.client_id!, client_secret: key.client_secret!, refresh_token: key.refresh_token! },
  };
}
