// Confinement: every path the file tools take is under the configured roots and, when the client offers MCP roots,
// under one of those too; `..`, symlinks and absolute paths that leave them are refused naming the roots.
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { ListRootsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningGaggle } from "../../helpers/gaggle.js";
import { envelope } from "../../helpers/modern-http.js";
import { RawStdioGaggle } from "../../helpers/raw-stdio.js";
import { scratch, workspaceConfig, workspaceGaggle, type Tools } from "./helpers.js";

describe("the roots of the workspace", () => {
  let root: string;
  let outside: string;
  let gaggle: RunningGaggle & Tools;
  beforeAll(async () => {
    root = scratch();
    outside = scratch("gaggle-outside-");
    writeFileSync(join(outside, "secret.txt"), "secret\n");
    mkdirSync(join(root, "src"));
    writeFileSync(join(root, "src", "ok.txt"), "ok\n");
    symlinkSync(outside, join(root, "escape"));
    symlinkSync(join(outside, "secret.txt"), join(root, "secret-link"));
    symlinkSync(join(outside, "not-yet.txt"), join(root, "dangling"));
    symlinkSync(join(root, "src", "ok.txt"), join(root, "inner-link"));
    gaggle = await workspaceGaggle(root);
  });
  afterAll(() => gaggle.close());

  it("refuses .., absolute paths and symlinks that leave the roots, for every file tool, naming the roots", async () => {
    const attempts: Array<[string, Record<string, unknown>]> = [
      ["View", { file_path: "../" + outside.split("/").pop() + "/secret.txt" }],
      ["View", { file_path: `${root}/src/../../${outside.split("/").pop()}/secret.txt` }],
      ["View", { file_path: join(outside, "secret.txt") }],
      ["View", { file_path: "secret-link" }],
      ["View", { file_path: "escape/secret.txt" }],
      ["LS", { path: "escape" }],
      ["LS", { path: "/" }],
      ["Edit", { file_path: "escape/new.txt", old_string: "", new_string: "x" }],
      ["Edit", { file_path: "dangling", old_string: "", new_string: "x" }],
      ["Replace", { file_path: "secret-link", content: "overwritten" }],
      ["Replace", { file_path: "escape/deeper/new.txt", content: "x" }],
    ];
    for (const [tool, args] of attempts) {
      const refused = await gaggle.failure(tool, args);
      expect({ tool, args, code: refused.code }).toEqual({ tool, args, code: "PERMISSION_DENIED" });
      expect(refused.error).toContain(`is outside the allowed roots (${root})`);
    }
    expect(await gaggle.bash(`cat ${join(outside, "secret.txt")}`)).toBe("secret\n");
  });

  it("follows symlinks that stay inside", async () => {
    expect(await gaggle.text("View", { file_path: "inner-link" })).toBe("     1\tok");
  });
});

describe("a client's own roots", () => {
  it("narrow the configured roots, and are asked again when the client says they changed", async () => {
    const root = scratch();
    for (const name of ["a", "b"]) {
      mkdirSync(join(root, name));
      writeFileSync(join(root, name, "file.txt"), `${name}\n`);
    }
    let offered = [join(root, "a")];
    const client = new Client({ name: "rooted", version: "0.0.0" }, { capabilities: { roots: { listChanged: true } } });
    client.setRequestHandler(ListRootsRequestSchema, () => ({ roots: offered.map((dir) => ({ uri: pathToFileURL(dir).href, name: dir })) }));
    const gaggle = await workspaceGaggle(root, "", { client });
    try {
      // A new shell starts in the first client root under the configured ones.
      expect(await gaggle.bash("pwd")).toBe(`${join(root, "a")}\n`);
      expect(await gaggle.text("View", { file_path: join(root, "a", "file.txt") })).toBe("     1\ta");
      expect(await gaggle.failure("View", { file_path: join(root, "b", "file.txt") })).toMatchObject({
        code: "PERMISSION_DENIED",
        error: `"${join(root, "b", "file.txt")}" is outside the allowed roots (${root}; the client's: ${join(root, "a")})`,
      });
      offered = [join(root, "b")];
      await client.sendRootsListChanged();
      await expect.poll(async () => (await gaggle.call("View", { file_path: join(root, "b", "file.txt") })).isError).toBeFalsy();
      expect((await gaggle.failure("View", { file_path: join(root, "a", "file.txt") })).code).toBe("PERMISSION_DENIED");
      // A client root outside the configured ones opens nothing.
      offered = ["/etc"];
      await client.sendRootsListChanged();
      await expect.poll(async () => (await gaggle.call("View", { file_path: join(root, "b", "file.txt") })).isError).toBe(true);
      expect((await gaggle.failure("View", { file_path: "/etc/hostname" })).code).toBe("PERMISSION_DENIED");
    } finally {
      await gaggle.close();
    }
  });
});

describe("a client without the roots capability", () => {
  let root: string;
  beforeAll(() => {
    root = scratch();
    writeFileSync(join(root, "file.txt"), "configured\n");
  });

  it("uses the configured roots in the 2025-11-25 era", async () => {
    const gaggle = await workspaceGaggle(root);
    try {
      expect(await gaggle.text("View", { file_path: "file.txt" })).toBe("     1\tconfigured");
      expect(await gaggle.bash("pwd")).toBe(`${root}\n`);
    } finally {
      await gaggle.close();
    }
  });

  it("uses the configured roots in the 2026-07-28 era", async () => {
    const gaggle = new RawStdioGaggle(workspaceConfig(root));
    try {
      const call = (id: string, tool: string, args: Record<string, unknown>) => {
        const params = { name: "execute_child_tool", arguments: { server_id: "workspace", tool_name: tool, arguments: args }, _meta: envelope() };
        gaggle.send({ id, method: "tools/call", params });
        return gaggle.answerTo(id);
      };
      const text = (answer: Record<string, unknown>) => (answer.result as { content: Array<{ text: string }> }).content[0]!.text;
      const viewed = await call("view", "View", { file_path: "file.txt" });
      expect(viewed.error).toBeUndefined();
      expect(text(viewed)).toBe("     1\tconfigured");
      const ran = await call("bash", "Bash", { command: "pwd" });
      expect(ran.error).toBeUndefined();
      expect(text(ran)).toBe(`${root}\n[exit status 0]`);
      expect((await call("outside", "View", { file_path: "/etc/hostname" })).result).toMatchObject({ isError: true });
    } finally {
      await gaggle.close();
    }
  });
});
