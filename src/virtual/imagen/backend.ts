// Which Imagen API a call goes to, and with what credential: the Gemini API with an API key, or Vertex AI with a
// project and an OAuth token (given, or got from a credentials file). The settings come first, then the
// environment the way Google's own tools read it; with neither, the error names every setting that would do.
import type { ImagenSettings } from "../../config/virtual/imagen.js";
import { DEFAULT_REGION } from "../../config/virtual/imagen.js";
import { GaggleError } from "../../shared/errors.js";
import { GoogleCredentials } from "./google-credentials.js";

export interface ImagenBackend {
  /** "Gemini API" or "Vertex AI (project P, region R)", for answers and errors. */
  readonly name: string;
  /** The predict endpoint of `model`. */
  predictUrl(model: string): string;
  headers(signal: AbortSignal): Promise<Record<string, string>>;
  /** The setting to fix when the API refuses the credential. */
  readonly credentialSetting: string;
}

const GEMINI_BASE = "https://generativelanguage.googleapis.com/v1beta";

/** The settings' api_key, then their project, then GEMINI_API_KEY (or GOOGLE_API_KEY), then GOOGLE_CLOUD_PROJECT (or GCP_PROJECT). */
export function chooseBackend(settings: ImagenSettings, env: NodeJS.ProcessEnv, credentials: Map<string, GoogleCredentials>): ImagenBackend {
  if (settings.apiKey) return gemini(settings.apiKey, settings.apiBase, "[virtual.imagen] api_key");
  if (settings.project) return vertex(settings.project, settings, env, credentials, "[virtual.imagen] project");
  if (env.GEMINI_API_KEY) return gemini(env.GEMINI_API_KEY, settings.apiBase, "GEMINI_API_KEY");
  if (env.GOOGLE_API_KEY) return gemini(env.GOOGLE_API_KEY, settings.apiBase, "GOOGLE_API_KEY");
  if (env.GOOGLE_CLOUD_PROJECT) return vertex(env.GOOGLE_CLOUD_PROJECT, settings, env, credentials, "GOOGLE_CLOUD_PROJECT");
  if (env.GCP_PROJECT) return vertex(env.GCP_PROJECT, settings, env, credentials, "GCP_PROJECT");
  throw new GaggleError("PERMISSION_DENIED", "imagen has no credential: neither a Gemini API key nor a Google Cloud project is set", {
    hint:
      'set [virtual.imagen] api_key = "${GEMINI_API_KEY}" (the Gemini API), or project with credentials_file or access_token ' +
      "(Vertex AI); GEMINI_API_KEY, or GOOGLE_CLOUD_PROJECT with GOOGLE_APPLICATION_CREDENTIALS, in gaggle's environment do too",
  });
}

function gemini(key: string, base: string | undefined, setting: string): ImagenBackend {
  const root = (base ?? GEMINI_BASE).replace(/\/+$/, "");
  return {
    name: "Gemini API",
    predictUrl: (model) => `${root}/models/${model}:predict`,
    headers: async () => ({ "x-goog-api-key": key }),
    credentialSetting: setting,
  };
}

function vertex(
  project: string,
  settings: ImagenSettings,
  env: NodeJS.ProcessEnv,
  credentials: Map<string, GoogleCredentials>,
  projectSetting: string,
): ImagenBackend {
  const region = settings.region ?? env.GOOGLE_CLOUD_LOCATION ?? env.GCP_REGION ?? DEFAULT_REGION;
  const root = (settings.apiBase ?? `https://${region}-aiplatform.googleapis.com/v1`).replace(/\/+$/, "");
  const token = settings.accessToken;
  const file = settings.credentialsFile ?? env.GOOGLE_APPLICATION_CREDENTIALS;
  const setting = token
    ? "[virtual.imagen] access_token"
    : settings.credentialsFile
      ? "[virtual.imagen] credentials_file"
      : "GOOGLE_APPLICATION_CREDENTIALS";
  if (!token && !file) {
    throw new GaggleError("PERMISSION_DENIED", `imagen has a Google Cloud project (${projectSetting}) but no credential for Vertex AI`, {
      hint: "set [virtual.imagen] credentials_file (a service account key, or gcloud auth application-default login's file) or access_token, or GOOGLE_APPLICATION_CREDENTIALS",
    });
  }
  let source: GoogleCredentials | undefined;
  if (!token) {
    source = credentials.get(file!) ?? new GoogleCredentials(file!, setting);
    credentials.set(file!, source);
  }
  return {
    name: `Vertex AI (project ${project}, region ${region})`,
    predictUrl: (model) => `${root}/projects/${project}/locations/${region}/publishers/google/models/${model}:predict`,
    headers: async (signal) => ({ authorization: `Bearer ${token ?? (await source!.accessToken(signal))}` }),
    credentialSetting: setting,
  };
}
