// Owns delivering messages: one delivery per recipient, member turns one at a time in order, and their states.
import { errorMessage } from "../../shared/errors.js";
import type { Logger } from "../../shared/log.js";
import { LimitReached } from "../goose/limits.js";
import type { LeadInbox } from "./inbox.js";
import { compactionText, messageTurn, turnFailedText } from "./prompts.js";
import {
  LEAD,
  now,
  SYSTEM,
  type DeliveryRecord,
  type MessageKind,
  type MessageRecord,
  type MessageScope,
  type TeamRecord,
  type TurnFailureRecord,
} from "./records.js";
import { newId, type TeamRegistry } from "./registry.js";
import { StartCalledOff, type Roster } from "./roster.js";
import type { MemberEvents, MemberRunner, MemberTurn } from "./runners.js";

export interface Draft {
  kind: MessageKind;
  from: string;
  to: string;
  scope: MessageScope;
  text: string;
  imagePaths: string[];
  recipients: string[];
  /** A turn_failed notice's subject. */
  failure?: TurnFailureRecord;
}

interface Carried {
  team: TeamRecord;
  delivery: DeliveryRecord;
}

/** Goose's text when it compacts a session's context. */
const COMPACTION = /auto-compact/i;

/**
 * A member gets one message per turn: a delivery is handed to its runner (gosling or agent session) only when the
 * runner is idle, so messages arrive in the order sent and each is `delivered` when its turn starts. While the
 * member is busy or starting, its deliveries are `deferred`; when a turn ends, waiting deliveries are tried again.
 */
export class Courier implements MemberEvents {
  /** Per agent: the delivery attempt in progress, so two never race for one runner. */
  private readonly chains = new Map<string, Promise<void>>();
  /** Handed to a runner that queued it behind prompts of its own: delivered when its turn starts. */
  private readonly handed = new Map<MemberTurn, Carried>();
  /** Delivered, its turn still running. */
  private readonly inTurn = new Map<MemberTurn, Carried>();
  /** Why nothing is handed over now, one entry per close of the team child under way. */
  private readonly pauses: string[] = [];
  /** Members closed (their team child closed for their team's owner) and not started since: see `hold`. */
  private readonly held = new Set<string>();

  constructor(
    private readonly registry: TeamRegistry,
    private readonly roster: Roster,
    private readonly inbox: LeadInbox,
    private readonly log: Logger,
  ) {}

  /** Follows every member's runner; returns the way to stop. */
  watch(): () => void {
    return this.roster.watch(this);
  }

  /**
   * Until the returned function is called (the team child closing, for `reason`), nothing is handed over and no
   * member is started: a message tried meanwhile waits (`deferred`, giving the reason) for the next team call.
   * Closes that overlap each hold the pause until they end.
   */
  pause(reason: string): () => void {
    this.pauses.push(reason);
    let resumed = false;
    return () => {
      if (resumed) return;
      resumed = true;
      this.pauses.splice(this.pauses.indexOf(reason), 1);
    };
  }

  private get paused(): string | undefined {
    return this.pauses[0];
  }

  /**
   * These members' team child was closed: none is started again, and a message to one waits (`deferred`), until a
   * team call made after the close (`reopen`). A call in flight at the close is no such call, nor is another
   * member's turn ending, so neither restarts a member of a team being closed, or of a person let in no more.
   */
  hold(agentIds: Iterable<string>): void {
    for (const agentId of agentIds) this.held.add(agentId);
  }

  /** A team call begins: the members it may start again (its caller's teams') are held no more. */
  reopen(agentIds: Iterable<string>): void {
    for (const agentId of agentIds) this.held.delete(agentId);
  }

  /** Adds the message and its deliveries to the team (not saved, not sent). */
  record(team: TeamRecord, draft: Draft): { message: MessageRecord; deliveries: DeliveryRecord[] } {
    const at = now();
    const message: MessageRecord = {
      message_id: newId("msg"),
      kind: draft.kind,
      from: draft.from,
      to: draft.to,
      scope: draft.scope,
      text: draft.text,
      image_paths: draft.imagePaths,
      at,
      ...(draft.failure && { failure: draft.failure }),
    };
    const deliveries = draft.recipients.map((to): DeliveryRecord => ({
      delivery_id: newId("dlv"),
      message_id: message.message_id,
      to,
      state: "pending",
      reason: null,
      created_at: at,
      delivered_at: null,
      read_at: null,
      gosling_id: null,
      agent_session_id: null,
    }));
    team.messages.push(message);
    team.deliveries.push(...deliveries);
    return { message, deliveries };
  }

  /** Records, saves and sends: to the lead's inbox at once, to members as their turns allow. */
  post(team: TeamRecord, draft: Draft): { message: MessageRecord; deliveries: DeliveryRecord[] } {
    const posted = this.record(team, draft);
    for (const delivery of posted.deliveries) if (delivery.to === LEAD) this.inbox.deliver(team, posted.message, delivery);
    void this.registry.save(team);
    for (const delivery of posted.deliveries) if (delivery.to !== LEAD) this.pump(delivery.to);
    return posted;
  }

  /** The onboarding turn carried this delivery. */
  deliveredBy(team: TeamRecord, delivery: DeliveryRecord, runner: MemberRunner, turn: MemberTurn): void {
    if (turn.state === "queued") this.handed.set(turn, { team, delivery });
    else this.markDelivered({ team, delivery }, runner, turn);
  }

  /** Tries every agent that has deliveries waiting (after gaggle restarted, members start again here). */
  pumpAll(): void {
    for (const agentId of this.registry.agentsWaiting()) this.pump(agentId);
  }

  pump(agentId: string): void {
    const previous = this.chains.get(agentId) ?? Promise.resolve();
    const next = previous
      .then(() => this.deliverNext(agentId))
      .catch((error: unknown) => this.log.error({ err: error, agent: agentId }, "delivery failed unexpectedly"));
    this.chains.set(agentId, next);
    void next.finally(() => {
      if (this.chains.get(agentId) === next) this.chains.delete(agentId);
    });
  }

  /** Every delivery still waiting for `agentId` fails with `reason` (it was removed). */
  failWaiting(agentId: string, reason: string): void {
    for (const { team, delivery } of this.registry.waitingFor(agentId)) this.settle({ team, delivery }, "failed", reason);
  }

  private async deliverNext(agentId: string): Promise<void> {
    for (;;) {
      if (this.paused !== undefined) return this.deferAll(agentId, `${this.paused}; the message waits for the next team call`);
      if (this.held.has(agentId)) return this.deferAll(agentId, HELD);
      const next = this.registry.waitingFor(agentId)[0];
      if (!next) return;
      if ([...this.handed.values()].some((carried) => carried.delivery === next.delivery)) return;
      const home = this.registry.agent(agentId);
      if (!home || home.member.removed_at) {
        this.settle(next, "failed", home ? `${agentId} was removed from team ${home.team.team_id}` : `there is no agent ${agentId}`);
        continue;
      }
      const message = next.team.messages.find((candidate) => candidate.message_id === next.delivery.message_id);
      if (!message) {
        this.settle(next, "failed", "the message is no longer kept");
        continue;
      }
      if (this.roster.isStarting(agentId)) return this.deferAll(agentId, `${agentId} is starting; the message waits for it`);
      const live = this.roster.live(agentId);
      if (live?.working) return this.deferAll(agentId, `${agentId} is busy; the message waits for its current turn to end`);
      const text = messageTurn(next.team, message, this.registry.titleOf(message.from));
      try {
        const { runner, turn } = live
          ? { runner: live, turn: live.send(text) }
          : await this.roster.whileStarting(agentId, () => this.roster.launch(home.team, home.member, text, {}));
        if (!live) void this.registry.save(home.team);
        if (turn.state === "queued") {
          this.handed.set(turn, next);
          return this.deferAll(agentId, `${agentId}'s ${runner.kind === "gosling" ? "gosling" : "agent session"} has other prompts queued first`);
        }
        // The rest now wait for this turn: the next pass marks them deferred.
        this.markDelivered(next, runner, turn);
      } catch (error) {
        if (waitable(error)) return this.deferAll(agentId, errorMessage(error));
        this.settle(next, "failed", errorMessage(error));
      }
    }
  }

  /** Everything waiting for the agent waits for the same reason. */
  private deferAll(agentId: string, reason: string): void {
    for (const carried of this.registry.waitingFor(agentId)) {
      if (carried.delivery.state === "deferred" && carried.delivery.reason === reason) continue;
      this.settle(carried, "deferred", reason);
    }
  }

  private markDelivered(carried: Carried, runner: MemberRunner, turn: MemberTurn): void {
    if (runner.kind === "gosling") carried.delivery.gosling_id = runner.id;
    else carried.delivery.agent_session_id = runner.id;
    this.inTurn.set(turn, carried);
    this.settle(carried, "delivered", null);
  }

  private settle({ team, delivery }: Carried, state: DeliveryRecord["state"], reason: string | null): void {
    delivery.state = state;
    delivery.reason = reason;
    if (state === "delivered") delivery.delivered_at = now();
    void this.registry.save(team);
  }

  turnStarted(runner: MemberRunner, turn: MemberTurn): void {
    const carried = this.handed.get(turn);
    if (!carried) return;
    this.handed.delete(turn);
    this.markDelivered(carried, runner, turn);
  }

  turnEnded(runner: MemberRunner, turn: MemberTurn): void {
    const agentId = this.roster.agentOf(runner);
    const home = agentId ? this.registry.agent(agentId) : undefined;
    if (home) {
      home.member.tokens = runner.tokens ?? home.member.tokens;
      home.member.session = runner.conversation ?? home.member.session;
      home.member.last_activity_at = now();
      void this.registry.save(home.team);
    }
    const carried = this.inTurn.get(turn);
    this.inTurn.delete(turn);
    // A turn that never reached the agent never showed the member its message.
    if (carried && !runner.reached(turn)) this.settle(carried, "failed", turn.problem ?? `its turn ended (${turn.state}) before the agent had it`);
    const failure = carried && runner.failure(turn);
    if (carried && failure) this.tellLead(carried, runner, turn, failure);
    if (!runner.live || this.paused !== undefined) return;
    // After the runner's own bookkeeping has settled (idle), which happens in the microtasks after this call.
    setImmediate(() => this.pumpAll());
  }

  /**
   * A member's turn that carried a message failed: the team's lead hears which member, which message and why, as a
   * notice from gaggle (in the client lead's inbox, or as a turn of a member that leads). Not while gaggle closes,
   * not for a removed member, and not for the lead's own turns (its notice would be one more turn of its own).
   */
  private tellLead({ team, delivery }: Carried, runner: MemberRunner, turn: MemberTurn, problem: string): void {
    const member = team.members.find((candidate) => candidate.agent_id === delivery.to);
    const message = team.messages.find((candidate) => candidate.message_id === delivery.message_id);
    if (!member || member.removed_at || !message || this.paused !== undefined || member.agent_id === team.lead_agent_id) return;
    const failure: TurnFailureRecord = {
      agent_id: member.agent_id,
      title: member.title,
      message_id: message.message_id,
      delivery_id: delivery.delivery_id,
      gosling_id: runner.kind === "gosling" ? runner.id : null,
      agent_session_id: runner.kind === "agent" ? runner.id : null,
      state: turn.state,
      problem,
    };
    this.post(team, {
      kind: "turn_failed",
      from: SYSTEM,
      to: team.lead_agent_id,
      scope: "direct",
      text: turnFailedText(member, message, failure),
      imagePaths: [],
      recipients: [team.lead_agent_id],
      failure,
    });
  }

  /** Handed over but never run: back to waiting, tried again on the next team call. */
  released(runner: MemberRunner): void {
    for (const [turn, carried] of this.handed) {
      if (!runner.holds(turn)) continue;
      this.handed.delete(turn);
      this.settle(carried, "pending", null);
    }
  }

  /** Goose compacted a member's context: the member that added it hears so, unless it unsubscribed. */
  notice(runner: MemberRunner, text: string): void {
    if (!COMPACTION.test(text)) return;
    const agentId = this.roster.agentOf(runner);
    const home = agentId ? this.registry.agent(agentId) : undefined;
    if (!home || home.member.removed_at || !home.member.compaction_notices || this.paused !== undefined) return;
    const { team, member } = home;
    this.post(team, {
      kind: "compaction",
      from: SYSTEM,
      to: member.added_by,
      scope: "direct",
      text: compactionText(member, text),
      imagePaths: [],
      recipients: [member.added_by],
    });
  }
}

/** Why a message to a member whose team child was closed waits. */
const HELD = "the team child was closed; the message waits for the next team call";

/** Limits that free up by themselves, and a start called off by the team child's close: the delivery waits instead of failing. */
function waitable(error: unknown): boolean {
  return (error instanceof LimitReached && error.freesUp) || error instanceof StartCalledOff;
}
