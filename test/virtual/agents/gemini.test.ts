// A second real agent through the agents child: Gemini CLI's ACP mode (gemini --acp), installed from the npm
// registry, pointed at a stand-in for the Gemini API. Unlike Claude, it reads and writes files through gaggle's
// fs/read_text_file and fs/write_text_file, confined to the session's roots.
import { linkSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningGaggle } from "../../helpers/gaggle.js";
import { StandInGemini } from "../../helpers/gemini-api.js";
import type { ModelRequest, ModelTurn } from "../../helpers/model-api.js";
import { PinnedPackage } from "../../helpers/npm-install.js";
import { agentDirs, settled, startAgentsGaggle, startSession, transcript, type AgentDirs } from "./helpers.js";

const GEMINI_CLI = new PinnedPackage("gemini-cli", "@google/gemini-cli", "0.61.0", "gemini");

beforeAll(() => GEMINI_CLI.install(), 180_000);

let next: { prompt: string; move: ModelTurn } | undefined;
function script({ results, prompt }: ModelRequest): ModelTurn {
  if (next && prompt.endsWith(next.prompt) && results.length === 0) {
    const { move } = next;
    next = undefined;
    return move;
  }
  return { text: `done: ${results.map((result) => `${result.tool} said ${result.text}`).join("; ")}` };
}

let model: StandInGemini;
let dirs: AgentDirs;
let gaggle: RunningGaggle;

beforeAll(async () => {
  model = await StandInGemini.start(script);
  dirs = agentDirs();
  const home = join(dirs.dir, "home");
  mkdirSync(join(home, ".gemini"), { recursive: true });
  const settings = {
    security: { auth: { selectedType: "gemini-api-key" } },
    privacy: { usageStatisticsEnabled: false },
    general: { enableAutoUpdate: false },
  };
  writeFileSync(join(home, ".gemini", "settings.json"), JSON.stringify(settings));
  const env = {
    HOME: home,
    GEMINI_API_KEY: "stand-in",
    GOOGLE_GEMINI_BASE_URL: model.url,
    GEMINI_MODEL: "gemini-2.5-flash",
    GEMINI_CLI_TRUST_WORKSPACE: "true",
  };
  const table = [
    "[agents.gemini]",
    `command = ${JSON.stringify(GEMINI_CLI.bin)}`,
    'args = ["--acp"]',
    `cwd = ${JSON.stringify(dirs.root)}`,
    'permission = "allow"',
    `env = { ${Object.entries(env)
      .map(([key, value]) => `${key} = ${JSON.stringify(value)}`)
      .join(", ")} }`,
  ];
  gaggle = await startAgentsGaggle(dirs, "", table.join("\n"));
}, 30_000);

afterAll(async () => {
  await gaggle?.close();
  await model?.close();
});

/** Runs `prompt` in a new session, the model making `move` first; returns the transcript once the turn completed. */
async function run(prompt: string, move: ModelTurn): Promise<string> {
  next = { prompt, move };
  const id = await startSession(gaggle.client, { agent: "gemini", prompt });
  expect(await settled(gaggle.client, id, 1, 30_000)).toMatch(/^ {2}1\. .* \(completed in /m);
  return transcript(gaggle.client, id);
}

describe("Gemini CLI through the agents child", () => {
  it("rewrites a file inside the roots through gaggle's fs, the policy allowing it, and says so", async () => {
    const file = join(dirs.root, "notes.txt");
    writeFileSync(file, "before");
    const text = await run("rewrite it", { use: "write_file", input: { file_path: file, content: "after, by Gemini" } });
    expect(text).toContain('[permission] permission = "allow" allows this edit tool call: Allow');
    expect(text).toContain(`[agent] done: write_file said {"output":"Successfully overwrote file: ${file}.`);
    expect(readFileSync(file, "utf8")).toBe("after, by Gemini");
  });

  it("is refused a file inside the roots hard-linked to one outside them", async () => {
    const target = join(dirs.outside, "target.txt");
    writeFileSync(target, "outside, untouched");
    const linked = join(dirs.root, "linked.txt");
    linkSync(target, linked);
    const text = await run("rewrite the link", { use: "write_file", input: { file_path: linked, content: "through the link" } });
    // Gemini's own check of the workspace passes the link; gaggle's write does not.
    expect(text).toContain('[permission] permission = "allow" allows this edit tool call: Allow');
    expect(text).toContain(`[refused] write ${linked}: ${linked} has 2 hard links`);
    expect(readFileSync(target, "utf8")).toBe("outside, untouched");
  });
});
