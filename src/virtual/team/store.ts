// Owns the team files under <state dir>/team/teams: one JSON file per team, read at start, replaced atomically.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Logger } from "../../shared/log.js";
import { writeFileAtomic } from "../../shared/atomic-file.js";
import { LOCAL_PRINCIPAL } from "../../children/child.js";
import { LEAD, outstanding, type TeamRecord } from "./records.js";

/** Messages kept per team; older ones go, unless a delivery of theirs is still waiting or unread. */
export const MAX_MESSAGES = 1000;

export class TeamStore {
  constructor(
    readonly dir: string,
    private readonly log: Logger,
  ) {}

  /** Every team saved before; a file that cannot be read is logged and left alone. */
  load(): TeamRecord[] {
    let files: string[];
    try {
      files = readdirSync(this.dir).filter((file) => file.endsWith(".json"));
    } catch {
      return [];
    }
    return files.flatMap((file) => {
      const path = join(this.dir, file);
      try {
        const record = JSON.parse(readFileSync(path, "utf8")) as TeamRecord;
        if (typeof record.team_id !== "string" || !Array.isArray(record.members)) throw new Error("not a team record");
        // A team saved before teams had owners was the local user's.
        if (typeof record.owner !== "string") record.owner = LOCAL_PRINCIPAL;
        // A member saved before members could be ACP agents was a gosling.
        for (const member of record.members) {
          member.agent ??= null;
          member.agent_session_id ??= null;
        }
        for (const delivery of record.deliveries) delivery.agent_session_id ??= null;
        return [record];
      } catch (error) {
        this.log.warn({ err: error, path }, "team file left out: it cannot be read");
        return [];
      }
    });
  }

  /**
   * Written to a temporary file and renamed over the old one, so a crash never leaves half a team; readable by
   * gaggle's user alone, as its messages are the team's.
   */
  save(team: TeamRecord): void {
    prune(team);
    writeFileAtomic(join(this.dir, `${team.team_id}.json`), JSON.stringify(team, null, 1), { mode: 0o600, dirMode: 0o700 });
  }
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
