// One call to Imagen's predict endpoint: the request body the API documents, the images of its answer saved under
// the output folder, and the API's refusals told in gaggle's error shape with the setting to change.
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { GaggleError, errorMessage, fetchFailure, type ErrorCode } from "../../shared/errors.js";
import { timerDelay } from "../../shared/timer-delay.js";
import type { ImagenBackend } from "./backend.js";

export interface ImageRequest {
  prompt: string;
  number_of_images?: number | undefined;
  sample_image_size?: "1K" | "2K" | undefined;
  aspect_ratio?: string | undefined;
  person_generation?: string | undefined;
  safety_filter_level?: string | undefined;
}

export interface SavedImage {
  path: string;
  mimeType: string;
  data: string;
  bytes: number;
}

/** The predict body: one instance, and only the parameters the caller gave (the API's defaults for the rest). */
export function predictBody(request: ImageRequest): Record<string, unknown> {
  const parameters = {
    sampleCount: request.number_of_images ?? 1,
    ...(request.aspect_ratio && { aspectRatio: request.aspect_ratio }),
    ...(request.person_generation && { personGeneration: request.person_generation }),
    ...(request.safety_filter_level && { safetySetting: request.safety_filter_level }),
    ...(request.sample_image_size && { sampleImageSize: request.sample_image_size }),
  };
  return { instances: [{ prompt: request.prompt }], parameters };
}

export async function generateImages(
  backend: ImagenBackend,
  model: string,
  request: ImageRequest,
  options: { outputDir: string; timeoutMs: number; signal?: AbortSignal | undefined; label: string },
): Promise<SavedImage[]> {
  const timeout = AbortSignal.timeout(timerDelay(options.timeoutMs));
  const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
  let response: Response;
  try {
    response = await fetch(backend.predictUrl(model), {
      method: "POST",
      headers: { "content-type": "application/json", ...(await backend.headers(signal)) },
      body: JSON.stringify(predictBody(request)),
      signal,
    });
  } catch (error) {
    if (timeout.aborted)
      throw new GaggleError("TIMEOUT", `${backend.name} did not answer within ${options.timeoutMs} ms ([virtual.imagen] timeout_ms)`);
    if (options.signal?.aborted)
      throw new GaggleError("EXECUTION_ERROR", `the request to ${backend.name} was stopped: ${errorMessage(options.signal.reason)}`);
    const failure = fetchFailure(error);
    if (!failure) throw error;
    throw new GaggleError(
      "SERVER_FAILED",
      `could not reach ${backend.name} at ${new URL(backend.predictUrl(model)).origin} (${failure.code ?? failure.message})`,
      {
        hint: "check the network, or [virtual.imagen] api_base",
      },
    );
  }
  const body = (await response.json().catch(() => ({}))) as { predictions?: unknown; error?: { message?: unknown; status?: unknown } };
  if (!response.ok) throw refusal(backend, response.status, body.error);
  const predictions = Array.isArray(body.predictions) ? (body.predictions as Array<Record<string, unknown>>) : [];
  const images = predictions.filter((prediction) => typeof prediction.bytesBase64Encoded === "string");
  if (images.length === 0) {
    const filtered = predictions.map((prediction) => prediction.raiFilteredReason).find((reason) => typeof reason === "string");
    throw new GaggleError("EXECUTION_ERROR", `${backend.name} returned no image${filtered ? `: ${String(filtered)}` : ""}`, {
      hint: "the prompt may have been filtered: rephrase it, or change safety_filter_level or person_generation",
    });
  }
  await mkdir(options.outputDir, { recursive: true });
  const stamp = new Date().toISOString().replace(/[-:]/g, "").replace(/\..*/, "");
  const saved: SavedImage[] = [];
  // One after another, in the order the API gave them, as the first that cannot be written ends the call.
  for (const [index, image] of images.entries()) {
    const mimeType = typeof image.mimeType === "string" ? image.mimeType : "image/png";
    const data = image.bytesBase64Encoded as string;
    const bytes = Buffer.from(data, "base64");
    const path = join(options.outputDir, `imagen_${options.label}_${stamp}_${process.pid}_${index + 1}.${mimeType === "image/jpeg" ? "jpg" : "png"}`);
    await writeFile(path, bytes, { mode: 0o644 });
    saved.push({ path, mimeType, data, bytes: bytes.length });
  }
  return saved;
}

/** The API's error, with the code that says what to do: a credential refused, an argument refused, a quota, an outage. */
function refusal(backend: ImagenBackend, status: number, error: { message?: unknown; status?: unknown } | undefined): GaggleError {
  const said = typeof error?.message === "string" ? error.message : `HTTP ${status}`;
  const message = `${backend.name} refused the request (HTTP ${status}${typeof error?.status === "string" ? ` ${error.status}` : ""}): ${said}`;
  const [code, hint]: [ErrorCode, string] =
    status === 401 || status === 403
      ? ["PERMISSION_DENIED", `check the credential in ${backend.credentialSetting}, and that the API is enabled for it`]
      : status === 400
        ? ["INVALID_ARGS", "change the arguments the message names"]
        : status === 429
          ? ["LIMIT_REACHED", "the account's quota is spent for now: wait, or raise it in Google Cloud"]
          : ["SERVER_FAILED", "try again later"];
  return new GaggleError(code, message, { hint });
}
