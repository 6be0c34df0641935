// The npm package as a user installs it from a checkout: `npm pack`, then a global install of the tarball.
import { execFile } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { beforeAll, describe, expect, it } from "vitest";
import { textOf } from "./helpers/gaggle.js";
import { ROOT } from "./helpers/paths.js";

const run = promisify(execFile);
const { name, version } = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { name: string; version: string };

/** What `npm pack --json` says of the tarball it wrote. */
interface Packed {
  filename: string;
  files: { path: string }[];
}

describe("the packed and installed package", () => {
  const scratch = mkdtempSync(join(tmpdir(), "gaggle-pack-"));
  const prefix = join(scratch, "prefix");
  const installed = join(prefix, "lib", "node_modules", name);
  const gaggle = join(prefix, "bin", "gaggle");
  let packed: Packed;

  beforeAll(async () => {
    // --ignore-scripts: `prepare` would build dist/ again under the other tests' feet; the suite runs on a fresh build.
    const { stdout } = await run("npm", ["pack", "--ignore-scripts", "--json", "--pack-destination", scratch], { cwd: ROOT });
    [packed] = JSON.parse(stdout) as [Packed];
    await run("npm", ["install", "--global", "--prefix", prefix, "--prefer-offline", "--no-audit", "--no-fund", join(scratch, packed.filename)], {
      cwd: scratch,
    });
  }, 180_000);

  it("holds the built program, package.json, README, the docs it links to and the example configs, and no sources, tests or fixtures", () => {
    const docs = readdirSync(join(ROOT, "docs"), { recursive: true, encoding: "utf8" })
      .filter((path) => path.endsWith(".md"))
      .map((path) => `docs/${path}`);
    expect(docs).toContain("docs/configuration.md");
    const paths = packed.files.map((file) => file.path).sort();
    expect(paths).toEqual(
      [
        "README.md",
        "children_config.example.json",
        "children_config.example.toml",
        "dist/cli.js",
        "dist/gaggle.cjs",
        "dist/gaggle.cjs.map",
        ...docs,
        "package.json",
      ].sort(),
    );
    expect(packed.filename).toBe(`${name}-${version}.tgz`);
  });

  it("installs a gaggle command that prints its version and validates the example config", async () => {
    expect((await run(gaggle, ["--version"])).stdout).toBe(`${version}\n`);
    const example = join(installed, "children_config.example.toml");
    const validated = await run(gaggle, ["validate", "--config", example]);
    expect(validated.stdout).toBe(`${example}: valid; 4 child server(s), 2 enabled; 1 built-in (process)\n`);
  });

  it("ships an example config whose children work where it is installed", async () => {
    const example = join(installed, "children_config.example.toml");
    // npx takes the servers from npm's cache where it can (the checkout's install put them there).
    const env = { ...process.env, npm_config_prefer_offline: "true" };
    const doctor = await run(gaggle, ["doctor", "--json", "--config", example], { env, timeout: 170_000 }).catch(
      (error: { stdout?: string }) => error,
    );
    const report = JSON.parse(doctor.stdout ?? "{}") as { ok: boolean; children: Array<{ name: string; ok: boolean; tools?: number }> };
    expect(report.children.map(({ name, ok }) => ({ name, ok }))).toEqual([
      { name: "everything", ok: true },
      { name: "filesystem", ok: true },
      { name: "process", ok: true },
    ]);
    expect(report.ok).toBe(true);
  }, 180_000);

  it("serves MCP and reads command lines with the bash grammar its dependency ships", async () => {
    const config = join(scratch, "children_config.toml");
    writeFileSync(config, '[virtual.process.policy]\nallow = ["echo *"]\n');
    const client = new Client({ name: "package-test", version: "0.0.0" });
    await client.connect(new StdioClientTransport({ command: gaggle, args: ["--config", config], env: process.env as Record<string, string> }));
    try {
      const call = async (command: string) =>
        (await client.callTool({
          name: "execute_child_tool",
          arguments: { server_id: "process", tool_name: "gg_process_run", arguments: { command } },
        })) as CallToolResult;
      const ran = await call("echo packed");
      expect(ran.isError, textOf(ran)).toBeFalsy();
      expect(JSON.parse(textOf(await call("echo $(id)")))).toMatchObject({ code: "PERMISSION_DENIED" });
    } finally {
      await client.close();
    }
  });
});
