// The built-in `imagen` child: gomcptest's image tools (imagen_generate_standard, _ultra and _fast) on Google's
// Imagen API, through the Gemini API or Vertex AI. Images are saved under output_dir and come back as MCP image
// content with their paths.
import { join } from "node:path";
import { z } from "zod";
import type { ChildEvents } from "../../children/switchboard.js";
import type { ImagenSettings } from "../../config/virtual/imagen.js";
import type { BuiltIn } from "../context.js";
import { defineTool, VirtualChild, type VirtualTool } from "../virtual-child.js";
import { chooseBackend } from "./backend.js";
import { generateImages, type ImageRequest } from "./generate.js";
import type { GoogleCredentials } from "./google-credentials.js";

const NAME = "imagen";

/** gomcptest's three tools, each on its Imagen 4 model. */
const MODELS = [
  { tool: "imagen_generate_standard", label: "std", model: "imagen-4.0-generate-001", title: "Imagen 4", sizes: true },
  { tool: "imagen_generate_ultra", label: "ultra", model: "imagen-4.0-ultra-generate-001", title: "Imagen 4 Ultra (highest quality)", sizes: true },
  { tool: "imagen_generate_fast", label: "fast", model: "imagen-4.0-fast-generate-001", title: "Imagen 4 Fast (quickest)", sizes: false },
] as const;

const common = {
  prompt: z.string().min(1).max(10_000).describe("What the image shows (the API reads up to 480 tokens)."),
  number_of_images: z.int().min(1).max(4).describe("Images to generate, 1 to 4 (default 1).").optional(),
  aspect_ratio: z.enum(["1:1", "3:4", "4:3", "9:16", "16:9"]).describe("Default 1:1.").optional(),
  person_generation: z
    .enum(["dont_allow", "allow_adult", "allow_all"])
    .describe("Whether people may appear (the API's default: allow_adult).")
    .optional(),
  safety_filter_level: z
    .enum(["block_low_and_above", "block_medium_and_above", "block_only_high", "block_none"])
    .describe("How strictly the API filters (its default: block_medium_and_above).")
    .optional(),
};
const sized = { sample_image_size: z.enum(["1K", "2K"]).describe("Resolution: 1K (default) or 2K.").optional() };

class ImagenChild extends VirtualChild {
  protected readonly virtualTools: VirtualTool[];
  /** Credentials files read so far, each with the token it got, kept until near its expiry. */
  private readonly credentials = new Map<string, GoogleCredentials>();
  /** Requests at the API now: closing the child ends them. */
  private readonly inFlight = new Set<AbortController>();

  constructor(settings: ImagenSettings & { outputDir: string }, events: ChildEvents) {
    super(NAME, "Image generation with Google's Imagen 4 (Gemini API or Vertex AI); images saved and returned", events);
    this.virtualTools = MODELS.map(({ tool, label, model, title, sizes }) =>
      defineTool({
        name: tool,
        title: `Generate images: ${title}`,
        description:
          `Generates 1 to 4 images from a text prompt with ${title} (${model}). Each image comes back as image content, ` +
          `and is saved under ${settings.outputDir}; the first, text part gives each file's path and size.`,
        input: sizes ? z.strictObject({ ...common, ...sized }) : z.strictObject(common),
        annotations: { openWorldHint: true },
        run: async (args, ctx) => {
          const backend = chooseBackend(settings, process.env, this.credentials);
          const request = args as ImageRequest;
          const stop = new AbortController();
          this.inFlight.add(stop);
          const signal = ctx.cancel ? AbortSignal.any([ctx.cancel.signal, stop.signal]) : stop.signal;
          const images = await generateImages(backend, model, request, {
            outputDir: settings.outputDir,
            timeoutMs: settings.timeoutMs,
            signal,
            label,
          }).finally(() => this.inFlight.delete(stop));
          const summary = {
            model,
            api: backend.name,
            prompt: request.prompt,
            images: images.map(({ path, mimeType, bytes }) => ({ path, mime_type: mimeType, bytes })),
          };
          return {
            content: [
              { type: "text" as const, text: JSON.stringify(summary) },
              ...images.map(({ data, mimeType }) => ({ type: "image" as const, data, mimeType })),
            ],
          };
        },
      }),
    );
  }

  /** Ends the requests at the API; nothing else runs between calls. */
  protected async stopAll(): Promise<void> {
    for (const stop of this.inFlight) stop.abort(new Error("the imagen child was closed"));
  }
}

export const imagenChild: BuiltIn<ImagenSettings> = {
  create: (settings, { switchboard, stateDir }) =>
    new ImagenChild({ ...settings, outputDir: settings.outputDir ?? join(stateDir, "imagen") }, switchboard),
};
