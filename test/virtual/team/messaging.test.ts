// Messages: lead -> member, member -> lead (a notification and the inbox), member -> member, broadcast, busy members.
import { afterEach, describe, expect, it } from "vitest";
import { readJsonResource } from "../../helpers/gaggle.js";
import { listen } from "../../helpers/notifications.js";
import { until } from "../../helpers/poll.js";
import { callTeam, promptOf, startTeamGaggle, type DeliveryRow, type TeamGaggle } from "./helpers.js";

let team: TeamGaggle | undefined;
afterEach(async () => {
  await team?.close();
  team = undefined;
});

interface Inbox {
  agent_id: string;
  unread_count: number;
  messages: Array<{ message_id: string; from: string; from_title: string; message: string; kind: string; read_at: string | null }>;
}

const TURN_ANSWER = /^Turn \d+ of session gosling-[0-9a-f]{8}: you said "(.*)"$/m;

describe("messages between the lead and members", () => {
  it("lead -> member: a turn in the member's gosling that names the sender, with a receipt per recipient", async () => {
    team = await startTeamGaggle();
    const coder = await team.add("t1", { title: "Coder", prompt: "Set up the project." });
    await team.member("t1", coder);
    const receipt = await team.json<Record<string, unknown>>("gg_team_message", {
      team_id: "t1",
      recipient_agent_id: coder,
      message: "Please add tests.\nSecond line.",
    });
    expect(receipt).toMatchObject({
      recipient_count: 1,
      scope: "direct",
      image_count: 0,
      delivery_ids: [expect.stringMatching(/^dlv-/)],
      message_id: expect.stringMatching(/^msg-/),
    });
    expect(receipt).not.toHaveProperty("image_paths");
    await until(
      () => team!.runs().length,
      (count) => count === 2,
    );
    const turn = promptOf(team.runs()[1]!);
    expect(turn).toMatch(
      /^Message from lead \(team lead\): Please add tests\.\nSecond line\.\n\n\(Team t1, message msg-[0-9a-f]+\. Reply with gg_team_message: team_id "t1", recipient_agent_id "lead"\.\)$/,
    );
    expect(team.runs()[1]!.argv).toContain("--resume");
    const row = await team.member("t1", coder);
    const status = await team.status("t1");
    expect(status.deliveries.find((d) => d.delivery_id === (receipt.delivery_ids as string[])[0])).toMatchObject({
      from: "lead",
      to: coder,
      state: "delivered",
      reason: null,
    });
    expect(row).toMatchObject({
      title: "Coder",
      added_by: "lead",
      tokens: 200,
      last_message: { from: "lead", to: coder, excerpt: "Please add tests. Second line." },
    });
    expect(await team.transcript(row.gosling_id!)).toContain(">>> Message from lead (team lead): Please add tests.");
  });

  it("member -> lead: the lead's client is notified at once, and the message waits in its inbox until gg_team_status reads it", async () => {
    team = await startTeamGaggle();
    const heard = listen(team.client);
    const reply = callTeam("gg_team_message", { team_id: "t1", recipient_agent_id: "lead", message: "Done: 3 files changed." });
    const coder = await team.add("t1", { title: "Coder", prompt: `Work, then report. ${reply}` });
    const note = await until(
      () => heard.logs.find((log) => log.logger === "team"),
      (found) => found !== undefined,
    );
    expect(note).toMatchObject({
      level: "info",
      logger: "team",
      data: {
        team_id: "t1",
        from: coder,
        from_title: "Coder",
        text: "Done: 3 files changed.",
        kind: "message",
        scope: "direct",
        inbox: "team://t1/inbox",
        message: `Message from ${coder} (Coder) in team t1: "Done: 3 files changed."`,
      },
    });
    await until(
      () => heard.updated,
      (uris) => uris.includes("team://t1/inbox"),
    );
    // Reading the resource shows it and leaves it unread.
    for (let i = 0; i < 2; i++) {
      const inbox = await readJsonResource<Inbox>(team.client, "team://t1/inbox");
      expect(inbox).toMatchObject({
        agent_id: "lead",
        unread_count: 1,
        messages: [{ from: coder, from_title: "Coder", message: "Done: 3 files changed.", read_at: null }],
      });
    }
    const status = await team.status("t1");
    expect(status.unread_count).toBe(1);
    expect(status.unread_messages).toEqual([
      expect.objectContaining({ from: coder, from_title: "Coder", message: "Done: 3 files changed.", kind: "message" }),
    ]);
    expect((await team.status("t1")).unread_count).toBe(0);
    const after = await readJsonResource<Inbox>(team.client, "team://t1/inbox");
    expect(after.unread_count).toBe(0);
    expect(after.messages[0]!.read_at).toEqual(expect.any(String));
    // The member saw its own receipt.
    const row = await team.member("t1", coder);
    expect(await team.transcript(row.gosling_id!)).toMatch(
      /call-team gg_team_message -> \{"message_id":"msg-[0-9a-f]+","delivery_ids":\["dlv-[0-9a-f]+"\],"recipient_count":1,"scope":"direct","image_count":0/,
    );
  });

  it("member -> member: the recipient's turn names the member that sent it", async () => {
    team = await startTeamGaggle();
    const writer = await team.add("t1", { title: "Writer" });
    const reviewer = await team.add("t1", { title: "Reviewer" });
    await team.member("t1", writer);
    await team.member("t1", reviewer);
    const ask = callTeam("gg_team_message", { team_id: "t1", recipient_agent_id: reviewer, message: "Please review chapter 2." });
    await team.json("gg_team_message", { team_id: "t1", recipient_agent_id: writer, message: `Ask the reviewer. ${ask}` });
    const turn = await until(
      () =>
        team!
          .runs()
          .map(promptOf)
          .find((text) => text.startsWith(`Message from ${writer}`)),
      (found) => found !== undefined,
    );
    expect(turn).toMatch(
      new RegExp(
        `^Message from ${writer} \\(Writer\\): Please review chapter 2\\.\\n\\n\\(Team t1, message msg-[0-9a-f]+\\. Reply with gg_team_message: team_id "t1", recipient_agent_id "${writer}"\\.\\)$`,
      ),
    );
    const row = await team.member("t1", reviewer);
    expect(row.last_message).toMatchObject({ from: writer, to: reviewer, excerpt: "Please review chapter 2." });
    expect(await team.transcript(row.gosling_id!)).toContain(`Message from ${writer} (Writer): Please review chapter 2.`);
  });

  it("broadcast reaches everyone in the team but the sender, one delivery each", async () => {
    team = await startTeamGaggle();
    const heard = listen(team.client);
    const a = await team.add("t1", { title: "A" });
    const b = await team.add("t1", { title: "B" });
    const c = await team.add("t1", { title: "C" });
    for (const id of [a, b, c]) await team.member("t1", id);
    const fromLead = await team.json<{ delivery_ids: string[]; recipient_count: number; scope: string; deliveries: Array<{ agent_id: string }> }>(
      "gg_team_message",
      { team_id: "t1", recipient_agent_id: "broadcast", message: "Stand-up in 5." },
    );
    expect(fromLead).toMatchObject({ recipient_count: 3, scope: "broadcast" });
    expect(new Set(fromLead.delivery_ids).size).toBe(3);
    expect(fromLead.deliveries.map((d) => d.agent_id)).toEqual([a, b, c]);
    await until(
      () => team!.runs().filter((run) => promptOf(run).startsWith("Message from lead (team lead): Stand-up in 5.")).length,
      (n) => n === 3,
    );
    // A member's broadcast goes to the lead and the other members, not back to itself.
    for (const id of [a, b, c]) await team.member("t1", id);
    const shout = callTeam("gg_team_message", { team_id: "t1", recipient_agent_id: "BROADCAST", message: "I pushed main." });
    await team.json("gg_team_message", { team_id: "t1", recipient_agent_id: a, message: `Tell everyone. ${shout}` });
    await until(
      () => team!.runs().filter((run) => promptOf(run).startsWith(`Message from ${a} (A): I pushed main.`)).length,
      (n) => n === 2,
    );
    const heardByLead = await until(
      () => heard.logs.filter((log) => log.logger === "team"),
      (logs) => logs.length === 1,
    );
    expect(heardByLead[0]!.data).toMatchObject({ from: a, scope: "broadcast", text: "I pushed main." });
    const status = await team.status("t1");
    const fanout = status.deliveries.filter((d) => d.from === a);
    expect(fanout.map((d) => d.to).sort()).toEqual([b, c, "lead"].sort());
    expect(team.runs().filter((run) => promptOf(run).startsWith(`Message from ${a}`)).length).toBe(2);
  });

  it("a message to a busy member is deferred, then delivered in order when its turns end", async () => {
    team = await startTeamGaggle();
    const busy = await team.add("t1", { title: "Busy", prompt: "[slow 2500]" });
    const first = await team.json<{ delivery_ids: string[] }>("gg_team_message", {
      team_id: "t1",
      recipient_agent_id: busy,
      message: "first [slow 1500]",
    });
    const second = await team.json<{ delivery_ids: string[] }>("gg_team_message", { team_id: "t1", recipient_agent_id: busy, message: "second" });
    const stateOf = (deliveries: DeliveryRow[], id: string) => deliveries.find((d) => d.delivery_id === id);
    const ids = [first.delivery_ids[0]!, second.delivery_ids[0]!];
    const waiting = await until(
      () => team!.status("t1"),
      (s) => ids.every((id) => stateOf(s.deliveries, id)?.state === "deferred"),
    );
    expect(ids.map((id) => stateOf(waiting.deliveries, id))).toEqual([
      expect.objectContaining({ state: "deferred", reason: `${busy} is busy; the message waits for its current turn to end` }),
      expect.objectContaining({ state: "deferred" }),
    ]);
    expect(waiting.members[0]).toMatchObject({ state: "working", waiting_deliveries: 2 });
    // The first is delivered when the onboarding turn ends; the second waits for the first's turn.
    const midway = await until(
      () => team!.status("t1"),
      (s) => stateOf(s.deliveries, ids[0]!)?.state === "delivered",
    );
    expect(stateOf(midway.deliveries, ids[1]!)?.state).toBe("deferred");
    const done = await until(
      () => team!.status("t1"),
      (s) => ids.every((id) => stateOf(s.deliveries, id)?.state === "delivered"),
      15_000,
    );
    expect(done.members[0]!.waiting_deliveries).toBe(0);
    await team.member("t1", busy);
    expect(team.runs().map((run) => promptOf(run).split("\n")[0])).toEqual([
      expect.stringContaining("You are"),
      "Message from lead (team lead): first [slow 1500]",
      "Message from lead (team lead): second",
    ]);
    const answers = (await team.transcript(done.members[0]!.gosling_id!)).split("\n").filter((line) => TURN_ANSWER.test(line));
    expect(answers.map((line) => TURN_ANSWER.exec(line)![1])).toEqual([
      expect.stringContaining("You are"),
      "Message from lead (team lead): first [slow 1500]",
      "Message from lead (team lead): second",
    ]);
  });
});
