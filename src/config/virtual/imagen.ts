// `[virtual.imagen]`: the settings of the built-in image generator on Google's Imagen API, validated with the rest
// of the config. Credentials may come from here or from the environment (read when a tool is called).
import { z } from "zod";
import { configPath } from "../paths.js";
import { durationMs, expected, settingsTable } from "../zod-kit.js";
import { builtInSettings } from "./settings.js";

/** The Vertex AI region when neither the table nor the environment names one. */
export const DEFAULT_REGION = "us-central1";

const text = (what: string) => z.string(expected(what)).min(1, `expected ${what}, not an empty string`);
const flag = () => z.boolean(expected("true or false"));

const table = settingsTable({
  /** Off unless asked for: every call is billed to the account whose credential it uses. */
  enabled: flag().default(false),
  expose: flag().optional(),
  /** A Gemini API key (usually "${GEMINI_API_KEY}"): the Gemini API is used. */
  api_key: text("an API key").optional(),
  /** A Google Cloud project: Vertex AI is used, with credentials_file or access_token (or the environment's). */
  project: text("a project id").optional(),
  region: text("a region, e.g. us-central1").optional(),
  /** A service account key or an application-default credentials file (gcloud auth application-default login). */
  credentials_file: text("a file path").optional(),
  /** An OAuth access token for Vertex AI (usually "${VAR}"), in place of a credentials file. */
  access_token: text("an access token").optional(),
  /** Where images are saved; <state dir>/imagen when not given. Relative to the config file's folder. */
  output_dir: text("a directory path").optional(),
  /** The API's base URL, for a proxy (the Gemini API's or Vertex AI's, as the credential chooses). */
  api_base: z.url(expected("a URL")).optional(),
  timeout_ms: durationMs("a positive integer", { min: 1 }).default(120_000),
});

export const imagenSettings = builtInSettings(table, (settings, file) => ({
  ...settings,
  ...(settings.outputDir !== undefined && { outputDir: configPath(settings.outputDir, file) }),
  ...(settings.credentialsFile !== undefined && { credentialsFile: configPath(settings.credentialsFile, file) }),
}));

export type ImagenSettings = ReturnType<typeof imagenSettings.absolute>;
