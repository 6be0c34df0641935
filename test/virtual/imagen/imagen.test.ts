// The built-in imagen child through a real gaggle, against a local server that answers as Imagen's predict
// endpoint and Google's token endpoint document: the exact requests gaggle sends, the images it saves and returns,
// and each refusal told with the setting to change.
import { createVerify, generateKeyPairSync } from "node:crypto";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { failureOf, startGaggle } from "../../helpers/gaggle.js";

/** A 1x1 PNG, as the API would send an image. */
const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";
const ONLY_IMAGEN = "[virtual.process]\nenabled = false\n[virtual.goose]\nenabled = false\n[virtual.team]\nenabled = false\n";
/** Credentials a developer's shell may hold: none reaches the child unless a test gives it. */
const NO_CREDENTIALS = { GEMINI_API_KEY: "", GOOGLE_API_KEY: "", GOOGLE_CLOUD_PROJECT: "", GCP_PROJECT: "", GOOGLE_APPLICATION_CREDENTIALS: "" };

interface Seen {
  method: string;
  path: string;
  headers: IncomingMessage["headers"];
  body: string;
}

let api: Server;
let base: string;
const seen: Seen[] = [];
const { publicKey, privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });

beforeAll(async () => {
  api = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk: Buffer) => (body += chunk.toString("utf8")));
    req.on("end", () => {
      seen.push({ method: req.method!, path: req.url!, headers: req.headers, body });
      const send = (status: number, value: unknown): void =>
        void res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(value));
      if (req.url === "/token") {
        const form = new URLSearchParams(body);
        const [header, claims, signature] = (form.get("assertion") ?? "").split(".");
        const signed = createVerify("RSA-SHA256")
          .update(`${header}.${claims}`)
          .verify(publicKey, signature ?? "", "base64url");
        return signed
          ? send(200, { access_token: "ya29.from-the-key", expires_in: 3600, token_type: "Bearer" })
          : send(400, { error: "invalid_grant" });
      }
      const prompt = (JSON.parse(body) as { instances: Array<{ prompt: string }> }).instances[0]!.prompt;
      const status = /\[status (\d+)\]/.exec(prompt);
      if (status) return send(Number(status[1]), { error: { code: Number(status[1]), message: "the fake API says no", status: "REFUSED" } });
      if (prompt.includes("[filtered]")) return send(200, { predictions: [{ raiFilteredReason: "filtered by the fake's safety policy" }] });
      const count = (JSON.parse(body) as { parameters: { sampleCount: number } }).parameters.sampleCount;
      send(200, { predictions: Array.from({ length: count }, () => ({ bytesBase64Encoded: PNG, mimeType: "image/png" })) });
    });
  });
  await new Promise<void>((resolve) => api.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(api.address() as AddressInfo).port}`;
});
afterAll(() => new Promise((resolve) => api.close(resolve)));
beforeEach(() => void seen.splice(0));

async function imagenGaggle(settings: string, env: Record<string, string> = {}) {
  const dir = mkdtempSync(join(tmpdir(), "gaggle-imagen-"));
  const gaggle = await startGaggle(
    `${ONLY_IMAGEN}\n[virtual.imagen]\nenabled = true\noutput_dir = ${JSON.stringify(join(dir, "images"))}\n${settings}`,
    {
      env: { ...NO_CREDENTIALS, ...env },
    },
  );
  const call = (tool: string, args: Record<string, unknown>) =>
    gaggle.meta("execute_child_tool", { server_id: "imagen", tool_name: tool, arguments: args }) as Promise<CallToolResult>;
  return { dir, gaggle, call };
}

describe("imagen on the Gemini API", () => {
  it("sends the documented predict request with the API key, and returns each image as image content, saved", async () => {
    const { gaggle, call, dir } = await imagenGaggle(`api_key = "gemini-key-1"\napi_base = "${base}/v1beta"\n`);
    try {
      const result = await call("imagen_generate_standard", {
        prompt: "a lighthouse at dawn",
        number_of_images: 2,
        aspect_ratio: "16:9",
        person_generation: "dont_allow",
        safety_filter_level: "block_only_high",
        sample_image_size: "2K",
      });
      expect(seen).toHaveLength(1);
      expect(seen[0]).toMatchObject({ method: "POST", path: "/v1beta/models/imagen-4.0-generate-001:predict" });
      expect(seen[0]!.headers["x-goog-api-key"]).toBe("gemini-key-1");
      expect(JSON.parse(seen[0]!.body)).toEqual({
        instances: [{ prompt: "a lighthouse at dawn" }],
        parameters: { sampleCount: 2, aspectRatio: "16:9", personGeneration: "dont_allow", safetySetting: "block_only_high", sampleImageSize: "2K" },
      });
      const [text, first, second] = result.content as Array<{ type: string; data?: string; mimeType?: string; text?: string }>;
      expect([first, second]).toEqual([
        { type: "image", data: PNG, mimeType: "image/png" },
        { type: "image", data: PNG, mimeType: "image/png" },
      ]);
      const summary = JSON.parse(text!.text!) as { api: string; images: Array<{ path: string; bytes: number }> };
      expect(summary.api).toBe("Gemini API");
      expect(summary.images).toHaveLength(2);
      for (const image of summary.images) {
        expect(image.path.startsWith(join(dir, "images", "imagen_std_"))).toBe(true);
        expect(readFileSync(image.path).equals(Buffer.from(PNG, "base64"))).toBe(true);
      }
    } finally {
      await gaggle.close();
    }
  });

  it("takes GEMINI_API_KEY from the environment, and sends only the parameters given", async () => {
    const { gaggle, call } = await imagenGaggle(`api_base = "${base}/v1beta"\n`, { GEMINI_API_KEY: "from-env" });
    try {
      await call("imagen_generate_fast", { prompt: "a fox" });
      expect(seen[0]!.headers["x-goog-api-key"]).toBe("from-env");
      expect(JSON.parse(seen[0]!.body)).toEqual({ instances: [{ prompt: "a fox" }], parameters: { sampleCount: 1 } });
      // The fast model takes no image size; bad arguments never reach the API.
      expect(failureOf(await call("imagen_generate_fast", { prompt: "a fox", sample_image_size: "2K" })).code).toBe("INVALID_ARGS");
      expect(failureOf(await call("imagen_generate_ultra", { prompt: "a fox", number_of_images: 9 })).code).toBe("INVALID_ARGS");
      expect(seen).toHaveLength(1);
    } finally {
      await gaggle.close();
    }
  });

  it("tells each refusal of the API with the code that says what to do, and the setting to change", async () => {
    const { gaggle, call } = await imagenGaggle(`api_key = "k"\napi_base = "${base}/v1beta"\n`);
    try {
      const refused = (prompt: string) => call("imagen_generate_standard", { prompt }).then(failureOf);
      expect(await refused("[status 403]")).toMatchObject({
        code: "PERMISSION_DENIED",
        error: "Gemini API refused the request (HTTP 403 REFUSED): the fake API says no",
        hint: "check the credential in [virtual.imagen] api_key, and that the API is enabled for it",
      });
      expect((await refused("[status 400]")).code).toBe("INVALID_ARGS");
      expect((await refused("[status 429]")).code).toBe("LIMIT_REACHED");
      expect((await refused("[status 503]")).code).toBe("SERVER_FAILED");
      expect(await refused("[filtered]")).toMatchObject({
        code: "EXECUTION_ERROR",
        error: "Gemini API returned no image: filtered by the fake's safety policy",
      });
    } finally {
      await gaggle.close();
    }
  });

  it("without a credential, says which settings would give one, and sends nothing", async () => {
    const { gaggle, call } = await imagenGaggle(`api_base = "${base}/v1beta"\n`);
    try {
      const missing = failureOf(await call("imagen_generate_standard", { prompt: "anything" }));
      expect(missing).toMatchObject({
        code: "PERMISSION_DENIED",
        error: "imagen has no credential: neither a Gemini API key nor a Google Cloud project is set",
      });
      expect(missing.hint).toContain('[virtual.imagen] api_key = "${GEMINI_API_KEY}"');
      expect(missing.hint).toContain("GOOGLE_APPLICATION_CREDENTIALS");
      expect(seen).toEqual([]);
    } finally {
      await gaggle.close();
    }
  });
});

describe("imagen on Vertex AI", () => {
  it("trades a service account key for a token once, and sends it to the project's regional endpoint", async () => {
    const keyDir = mkdtempSync(join(tmpdir(), "gaggle-imagen-key-"));
    const keyFile = join(keyDir, "service-account.json");
    const pem = privateKey.export({ type: "pkcs8", format: "pem" }).toString();
    writeFileSync(
      keyFile,
      JSON.stringify({ type: "service_account", client_email: "imagen@p1.iam.gserviceaccount.com", private_key: pem, token_uri: `${base}/token` }),
    );
    const settings = `project = "p1"\nregion = "europe-west4"\ncredentials_file = ${JSON.stringify(keyFile)}\napi_base = "${base}/v1"\n`;
    const { gaggle, call } = await imagenGaggle(settings);
    try {
      await call("imagen_generate_fast", { prompt: "a harbour" });
      await call("imagen_generate_ultra", { prompt: "a harbour at night" });
      const tokens = seen.filter((request) => request.path === "/token");
      expect(tokens).toHaveLength(1);
      const claims = JSON.parse(Buffer.from(new URLSearchParams(tokens[0]!.body).get("assertion")!.split(".")[1]!, "base64url").toString()) as Record<
        string,
        unknown
      >;
      expect(claims).toMatchObject({
        iss: "imagen@p1.iam.gserviceaccount.com",
        aud: `${base}/token`,
        scope: "https://www.googleapis.com/auth/cloud-platform",
      });
      const predicts = seen.filter((request) => request.path !== "/token");
      expect(predicts.map((request) => request.path)).toEqual([
        "/v1/projects/p1/locations/europe-west4/publishers/google/models/imagen-4.0-fast-generate-001:predict",
        "/v1/projects/p1/locations/europe-west4/publishers/google/models/imagen-4.0-ultra-generate-001:predict",
      ]);
      expect(predicts.map((request) => request.headers.authorization)).toEqual(["Bearer ya29.from-the-key", "Bearer ya29.from-the-key"]);
    } finally {
      await gaggle.close();
    }
  });

  it("uses an access token as given, and a project without any credential is told what to set", async () => {
    const given = await imagenGaggle(`project = "p2"\naccess_token = "ya29.given"\napi_base = "${base}/v1"\n`);
    try {
      await given.call("imagen_generate_standard", { prompt: "a kite" });
      expect(seen.map((request) => [request.path, request.headers.authorization])).toEqual([
        ["/v1/projects/p2/locations/us-central1/publishers/google/models/imagen-4.0-generate-001:predict", "Bearer ya29.given"],
      ]);
    } finally {
      await given.gaggle.close();
    }
    const bare = await imagenGaggle(`project = "p3"\napi_base = "${base}/v1"\n`);
    try {
      expect(failureOf(await bare.call("imagen_generate_standard", { prompt: "a kite" }))).toMatchObject({
        code: "PERMISSION_DENIED",
        error: "imagen has a Google Cloud project ([virtual.imagen] project) but no credential for Vertex AI",
      });
    } finally {
      await bare.gaggle.close();
    }
  });
});
