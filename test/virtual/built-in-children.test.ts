// The built-in children across a reload: a child is made again when its settings change or a child it is built on
// is made again (team on goose); every other one is the same object, its work untouched; a disabled one is gone.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { Child } from "../../src/children/child.js";
import { Switchboard } from "../../src/children/switchboard.js";
import { BuiltInChildren, type MemberUrls } from "../../src/virtual/index.js";
import { loadConfig } from "../helpers/config.js";
import { agentConfig, agentDirs } from "./agents/helpers.js";
import { gooseConfig } from "./goose/helpers.js";

const NO_MEMBER_LISTENER: MemberUrls = {
  urlFor: async () => ({ url: "http://127.0.0.1:9/members/unused/mcp", revoke: () => {} }),
  leadOf: () => undefined,
  sameTeam: () => false,
};

const made: Child[] = [];
afterEach(async () => {
  await Promise.allSettled(made.splice(0).map((child) => child.close()));
});

const byName = (children: Child[]) => new Map(children.map((child) => [child.name, child]));

describe("the built-in children of a reloaded config", () => {
  it("are made again only where their settings, or the settings of one they are built on, changed", async () => {
    const dir = mkdtempSync(join(tmpdir(), "gaggle-built-ins-"));
    const builtIns = new BuiltInChildren(loadConfig(gooseConfig(dir)), new Switchboard(), NO_MEMBER_LISTENER);
    const first = byName(builtIns.children());
    made.push(...first.values());
    expect([...first.keys()]).toEqual(["process", "goose", "team"]);

    // goose changes: goose and the team built on it are made again; process is left as it was.
    const second = builtIns.reconfigure(loadConfig(gooseConfig(dir, "max_active = 2")));
    made.push(...second.made);
    expect(second.made.map((child) => child.name)).toEqual(["goose", "team"]);
    expect(second.removed).toEqual([]);
    const now = byName(builtIns.children());
    expect(now.get("process")).toBe(first.get("process"));
    expect(now.get("goose")).not.toBe(first.get("goose"));

    // The same settings again change nothing; disabling goose takes the team with it; process changes alone.
    expect(builtIns.reconfigure(loadConfig(gooseConfig(dir, "max_active = 2")))).toEqual({ made: [], removed: [], followed: [] });
    const third = builtIns.reconfigure(loadConfig(`${gooseConfig(dir, "enabled = false")}\n[virtual.process]\nmax_processes = 9\n`));
    made.push(...third.made);
    expect(third.made.map((child) => child.name)).toEqual(["process"]);
    expect(third.removed).toEqual(["goose", "team"]);
    expect([...byName(builtIns.children()).keys()]).toEqual(["process"]);
  });

  it("follow the [agents.NAME] tables in the agents child as it runs, the team built on it left as it was", async () => {
    const dirs = agentDirs();
    const builtIns = new BuiltInChildren(loadConfig(agentConfig(dirs)), new Switchboard(), NO_MEMBER_LISTENER);
    const first = byName(builtIns.children());
    made.push(...first.values());
    expect([...first.keys()]).toEqual(expect.arrayContaining(["agents", "team"]));

    const changed = builtIns.reconfigure(loadConfig(agentConfig(dirs, 'permission = "allow"')));
    expect(changed.made).toEqual([]);
    expect(changed.followed.map(({ name }) => name)).toEqual(["agents"]);
    await Promise.all(changed.followed.map(({ done }) => done));
    const now = byName(builtIns.children());
    for (const name of first.keys()) expect(now.get(name)).toBe(first.get(name));

    // With no agent left, the agents child is gone.
    const none = builtIns.reconfigure(loadConfig(`[gateway]\nstate_dir = ${JSON.stringify(join(dirs.dir, "state"))}\n`));
    expect(none.removed).toContain("agents");
  });
});
