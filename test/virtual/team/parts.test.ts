// The team child's pure parts: argument rules, image sniffing, the text of a message turn, the fake's call directives.
import { execFileSync } from "node:child_process";
import { mkdtempSync, realpathSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { describe, expect, it } from "vitest";
import { checkImages } from "../../../src/virtual/team/images.js";
import { messageTurn } from "../../../src/virtual/team/prompts.js";
import type { MessageRecord, TeamRecord } from "../../../src/virtual/team/records.js";
import { parseManage, resolvePreset, worktreeName } from "../../../src/virtual/team/validate.js";
import { placeOf } from "../../../src/virtual/team/worktrees.js";
import { fixture } from "../../helpers/paths.js";
import { PNG } from "./helpers.js";

const { parseCalls } = (await import(fixture("goose/calls.mjs"))) as {
  parseCalls(prompt: string): { calls: Array<{ server: string; tool: string; args: unknown }>; rest: string };
};

describe("argument rules", () => {
  it("add mode unless remove_agent_ids is given; ids de-duplicated; compaction notices on by default", () => {
    expect(parseManage({ team_id: "t", remove_agent_ids: ["a", "b", "a"] })).toEqual({ mode: "remove", teamId: "t", agentIds: ["a", "b"] });
    expect(parseManage({ team_id: "t", title: "  ", worktree_name: "" })).toEqual({
      mode: "add",
      teamId: "t",
      title: undefined,
      prompt: undefined,
      imagePaths: [],
      modelPreset: undefined,
      worktree: undefined,
      compactionNotices: true,
    });
    expect(
      parseManage({ team_id: "t", worktree_name: "X", use_existing_worktree: true, unsubscribe_from_compaction_notifications: true }),
    ).toMatchObject({
      worktree: { name: "x", existing: true },
      compactionNotices: false,
    });
  });

  it("worktree names: lower-cased, then [a-z0-9][a-z0-9-_]*", () => {
    expect(["API_v2", "fix-Login", "9lives"].map(worktreeName)).toEqual(["api_v2", "fix-login", "9lives"]);
    for (const bad of ["-x", "a.b", "a b", "é"]) expect(() => worktreeName(bad)).toThrow(/is not valid/);
  });
});

describe("worktree places", () => {
  it("keep the local principal's names as they are and put a named principal's under @<principal>", () => {
    expect(placeOf("/w", "local", "fix")).toEqual({ dir: "/w", path: "/w/fix", branch: "fix" });
    expect(placeOf("/w", "ann", "fix")).toEqual({ dir: "/w/@ann", path: "/w/@ann/fix", branch: "@ann/fix" });
    expect(placeOf("/w", "auth_token", "fix")).toMatchObject({ branch: "@auth_token/fix" });
  });

  it("make every token name a branch git takes and a folder of its own, whatever its case and dots", () => {
    const names = ["Ann", "ann", "a..b", "x.lock", "end.", "ci-bot_2"];
    const places = names.map((name) => placeOf("/w", name, "fix"));
    expect(places.map((place) => place.branch)).toEqual(["@%41nn/fix", "@ann/fix", "@a%2E%2Eb/fix", "@x%2Elock/fix", "@end%2E/fix", "@ci-bot_2/fix"]);
    for (const { branch } of places) expect(execFileSync("git", ["check-ref-format", "--branch", branch], { encoding: "utf8" }).trim()).toBe(branch);
    expect(new Set(places.map((place) => place.dir.toLowerCase())).size).toBe(names.length);
  });
});

describe("model presets", () => {
  it("are found only among those configured, never among what every object has", () => {
    const fast = { provider: "openai", model: "gpt-4o-mini" };
    expect(resolvePreset("fast", { fast })).toEqual(fast);
    for (const name of ["constructor", "toString"]) {
      expect(() => resolvePreset(name, { fast })).toThrow(`Unknown model_preset "${name}". Available presets: fast`);
    }
  });
});

describe("image paths", () => {
  it("accept PNG, JPEG, GIF, WebP and BMP by their first bytes, whatever the name", async () => {
    const dir = mkdtempSync(join(tmpdir(), "gaggle-images-"));
    const files: Record<string, Buffer> = {
      "a.png": PNG,
      "b.bin": Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 0]),
      "c.gif": Buffer.from("GIF89a\x01\x00", "latin1"),
      "d.webp": Buffer.from("RIFF\x00\x00\x00\x00WEBPVP8 ", "latin1"),
      "e.bmp": Buffer.from("BM\x00\x00\x00\x00", "latin1"),
      "f.png": Buffer.from("not really"),
      "g.png": Buffer.alloc(0),
    };
    for (const [name, bytes] of Object.entries(files)) writeFileSync(join(dir, name), bytes);
    const place = { cwd: dir, roots: [dir] };
    expect(await checkImages(["a.png", "b.bin", "c.gif", "d.webp", "e.bmp"], place)).toEqual(
      ["a.png", "b.bin", "c.gif", "d.webp", "e.bmp"].map((name) => join(realpathSync(dir), name)),
    );
    await expect(checkImages(["a.png", "f.png"], place)).rejects.toThrow(/^image_paths\[1\] "f.png" .* is not an image/);
    await expect(checkImages(["g.png"], place)).rejects.toThrow(/is not an image/);
  });

  it("accept only images inside the sender's folders, a symlink by where it leads", async () => {
    const [inside, outside] = [mkdtempSync(join(tmpdir(), "gaggle-images-")), mkdtempSync(join(tmpdir(), "gaggle-elsewhere-"))];
    writeFileSync(join(outside, "secret.png"), PNG);
    symlinkSync(join(outside, "secret.png"), join(inside, "link.png"));
    const place = { cwd: inside, roots: [inside] };
    await expect(checkImages([join(outside, "secret.png")], place)).rejects.toThrow(
      /^image_paths\[0\] .* is outside the folders team images may come from/,
    );
    await expect(checkImages(["link.png"], place)).rejects.toThrow(/is outside the folders team images may come from/);
    await expect(checkImages(["../" + basename(outside) + "/secret.png"], place)).rejects.toThrow(/is outside/);
  });
});

describe("a message turn", () => {
  it("starts with the sender and its title, lists images, and ends with how to reply", () => {
    const team = { team_id: "t1" } as TeamRecord;
    const message = { message_id: "msg-1", from: "agent-1", text: "Look at this.", image_paths: ["/tmp/a.png", "/tmp/b.png"] } as MessageRecord;
    expect(messageTurn(team, message, "Designer")).toBe(
      "Message from agent-1 (Designer): Look at this.\n\nAttached images (read them from disk): /tmp/a.png, /tmp/b.png\n\n" +
        '(Team t1, message msg-1. Reply with gg_team_message: team_id "t1", recipient_agent_id "agent-1".)',
    );
    expect(messageTurn(team, { ...message, from: "gaggle", image_paths: [] }, "gaggle")).toBe("Message from gaggle (gaggle): Look at this.");
  });
});

describe("the fake goose's call directives", () => {
  it("parse JSON with brackets and nested directives inside, in order, and leave the rest of the prompt", () => {
    const inner = '[call-team gg_team_message {"team_id":"t","recipient_agent_id":"lead","message":"x"}]';
    const prompt = `a [call-team gg_team_manage ${JSON.stringify({ team_id: "t", prompt: inner, image_paths: ["]"] })}] b [slow 5] [call-child process gg_process_run {"command":"ls"}] [call-team broken {]`;
    const { calls, rest } = parseCalls(prompt);
    expect(calls).toEqual([
      { server: "team", tool: "gg_team_manage", args: { team_id: "t", prompt: inner, image_paths: ["]"] } },
      { server: "process", tool: "gg_process_run", args: { command: "ls" } },
    ]);
    expect(rest).toBe("a  b [slow 5]  [call-team broken {]");
  });
});
