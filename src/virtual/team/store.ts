// Owns the team files under <state dir>/team/teams: one JSON file per team in a folder per owner, read at start,
// replaced atomically.
import { readdirSync, readFileSync, unlinkSync, type Dirent } from "node:fs";
import { join } from "node:path";
import type { Logger } from "../../shared/log.js";
import { AtomicFile, writeFileAtomic } from "../../shared/atomic-file.js";
import { LOCAL_PRINCIPAL } from "../../children/child.js";
import { LEAD, outstanding, TEAM_ID_PATTERN, teamKey, type TeamRecord } from "./records.js";

/** Messages kept per team; older ones go, unless a delivery of theirs is still waiting or unread. */
export const MAX_MESSAGES = 1000;

/**
 * `<dir>/<owner>/<team id>.json`: team ids are each owner's own, so two owners' teams of one id are two files. A
 * team file straight in `<dir>` is of the layout where ids were shared; its owner is inside it, and loading moves it
 * into its owner's folder.
 */
export class TeamStore {
  /** One per team file saved since start: its writes run in order, the newest text last. */
  private readonly files = new Map<string, AtomicFile>();

  constructor(
    readonly dir: string,
    private readonly log: Logger,
  ) {}

  /**
   * Every team saved before; a file that cannot be read is logged and left alone. Reads and moves block the event
   * loop: this runs once, as the team child starts, before it answers any call.
   */
  load(): TeamRecord[] {
    const entries = this.entries(this.dir);
    const teams = new Map<string, TeamRecord>();
    for (const folder of entries.filter((entry) => entry.isDirectory())) {
      const path = join(this.dir, folder.name);
      for (const file of this.entries(path).filter(isTeamFile)) {
        const team = this.read(join(path, file.name));
        if (team) teams.set(teamKey(team.owner, team.team_id), team);
      }
    }
    for (const file of entries.filter(isTeamFile)) {
      const path = join(this.dir, file.name);
      const team = this.read(path);
      if (team) this.moveIntoOwnFolder(path, team, teams);
    }
    return [...teams.values()];
  }

  /**
   * A team file of the shared-id layout goes into its owner's folder: written there, then removed. A team already
   * in its owner's folder was written from it (a move cut short) or after it, and is kept.
   */
  private moveIntoOwnFolder(path: string, team: TeamRecord, teams: Map<string, TeamRecord>): void {
    const key = teamKey(team.owner, team.team_id);
    try {
      if (!teams.has(key)) {
        // Written before the old file is removed, so a crash between the two loses nothing.
        prune(team);
        writeFileAtomic(this.pathOf(team.owner, team.team_id), JSON.stringify(team, null, 1), TEAM_FILE);
        teams.set(key, team);
      }
      // eslint-disable-next-line no-restricted-syntax -- synchronous: teams are loaded, and moved, once as the team child is made, before it answers any call.
      unlinkSync(path);
    } catch (error) {
      // Still loaded from where it is; the next start tries the move again.
      if (!teams.has(key)) teams.set(key, team);
      this.log.warn({ err: error, path }, "team file could not be moved into its owner's folder");
    }
  }

  private entries(dir: string): Dirent[] {
    try {
      // eslint-disable-next-line no-restricted-syntax -- synchronous: as above, at load.
      return readdirSync(dir, { withFileTypes: true });
    } catch {
      return [];
    }
  }

  private read(path: string): TeamRecord | undefined {
    try {
      // eslint-disable-next-line no-restricted-syntax -- synchronous: as above, at load.
      const record = JSON.parse(readFileSync(path, "utf8")) as TeamRecord;
      if (typeof record.team_id !== "string" || !Array.isArray(record.members)) throw new Error("not a team record");
      // A team saved before teams had owners was the local user's.
      if (typeof record.owner !== "string") record.owner = LOCAL_PRINCIPAL;
      // Its id and owner name the file it is saved to (see pathOf): one that would name a file outside its owner's
      // folder, or a folder outside the teams folder, is no team gaggle wrote.
      if (!TEAM_ID_PATTERN.test(record.team_id)) throw new Error(`its team_id ${JSON.stringify(record.team_id)} is not a team id`);
      if (!isFolderName(ownerFolder(record.owner))) throw new Error(`its owner ${JSON.stringify(record.owner)} names no folder of its own`);
      // A member saved before members could be ACP agents was a gosling.
      for (const member of record.members) {
        member.agent ??= null;
        member.agent_session_id ??= null;
      }
      for (const delivery of record.deliveries) delivery.agent_session_id ??= null;
      return record;
    } catch (error) {
      this.log.warn({ err: error, path }, "team file left out: it cannot be read");
      return undefined;
    }
  }

  /** Where `owner`'s team `teamId` is kept. */
  pathOf(owner: string, teamId: string): string {
    return join(this.dir, ownerFolder(owner), `${teamId}.json`);
  }

  /**
   * Written to a temporary file and renamed over the old one, so a crash never leaves half a team; readable by
   * gaggle's user alone, as its messages are the team's. The team is taken as it is now; writes of one team land in
   * the order they were asked for. Resolves once it is on disk; a failure is logged, and rejects.
   */
  save(team: TeamRecord): Promise<void> {
    prune(team);
    const path = this.pathOf(team.owner, team.team_id);
    let file = this.files.get(path);
    if (!file) this.files.set(path, (file = new AtomicFile(path, TEAM_FILE)));
    const saving = file.write(JSON.stringify(team, null, 1));
    saving.catch((error: unknown) => this.log.warn({ err: error, path }, "team file could not be saved"));
    return saving;
  }

  /** Resolves once the team's newest save is on disk; rejects with its failure. */
  async saved(team: TeamRecord): Promise<void> {
    await this.files.get(this.pathOf(team.owner, team.team_id))?.saved();
  }

  /** Resolves once every save asked for so far has ended (failed ones included). */
  async settled(team?: TeamRecord): Promise<void> {
    const files = team ? [this.files.get(this.pathOf(team.owner, team.team_id))] : [...this.files.values()];
    await Promise.all(files.map((file) => file?.settled()));
  }
}

const TEAM_FILE = { mode: 0o600, dirMode: 0o700 };

/** The folder of `owner`'s teams: its name made one path component (a member principal's "/" encoded). */
function ownerFolder(owner: string): string {
  return encodeURIComponent(owner);
}

/** Whether `name` is a folder of its own inside the one it is joined to, not that folder or its parent. */
function isFolderName(name: string): boolean {
  return name !== "" && name !== "." && name !== "..";
}

function isTeamFile(entry: Dirent): boolean {
  return entry.isFile() && entry.name.endsWith(".json");
}

function prune(team: TeamRecord): void {
  const excess = team.messages.length - MAX_MESSAGES;
  if (excess <= 0) return;
  const keep = new Set(
    team.deliveries
      .filter((delivery) => outstanding(delivery) || (delivery.to === LEAD && delivery.read_at === null))
      .map((delivery) => delivery.message_id),
  );
  const dropped = new Set(
    team.messages
      .slice(0, excess)
      .filter((message) => !keep.has(message.message_id))
      .map((message) => message.message_id),
  );
  team.messages = team.messages.filter((message) => !dropped.has(message.message_id));
  team.deliveries = team.deliveries.filter((delivery) => !dropped.has(delivery.message_id));
}
