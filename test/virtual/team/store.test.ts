// The team files: a file whose team id or owner cannot name a file of its own under the teams folder is left out,
// never written elsewhere when loading moves it into its owner's folder.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { logger } from "../../../src/shared/log.js";
import { TeamStore } from "../../../src/virtual/team/store.js";

/** A teams folder inside a folder of its own, so that a file written beside it is seen. */
function teamsDir(): { root: string; dir: string } {
  const root = mkdtempSync(join(tmpdir(), "gaggle-team-store-"));
  const dir = join(root, "state", "teams");
  mkdirSync(dir, { recursive: true });
  return { root, dir };
}

function legacyFile(dir: string, file: string, fields: { team_id: string; owner: string }): void {
  const record = { ...fields, lead_agent_id: "lead", created_at: new Date().toISOString(), members: [], messages: [], deliveries: [] };
  writeFileSync(join(dir, file), JSON.stringify(record));
}

describe("TeamStore.load", () => {
  it("moves a plain team file into its owner's folder", () => {
    const { dir } = teamsDir();
    legacyFile(dir, "t1.json", { team_id: "t1", owner: "ann" });
    const teams = new TeamStore(dir, logger({ test: "team-store" })).load();
    expect(teams.map((team) => [team.owner, team.team_id])).toEqual([["ann", "t1"]]);
    expect(existsSync(join(dir, "ann", "t1.json"))).toBe(true);
    expect(existsSync(join(dir, "t1.json"))).toBe(false);
  });

  it.each([
    ["a team id that climbs out of the folder", { team_id: "../../escaped", owner: "ann" }],
    ["an owner that names the folder above", { team_id: "escaped", owner: ".." }],
  ])("leaves out a file with %s and writes nothing outside the teams folder", (_what, fields) => {
    const { root, dir } = teamsDir();
    legacyFile(dir, "odd.json", fields);
    const teams = new TeamStore(dir, logger({ test: "team-store" })).load();
    expect(teams).toEqual([]);
    expect(readdirSync(root)).toEqual(["state"]);
    expect(readdirSync(join(root, "state"))).toEqual(["teams"]);
    expect(existsSync(join(dir, "odd.json"))).toBe(true);
  });
});
