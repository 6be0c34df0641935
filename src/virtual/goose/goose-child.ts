// Owns the built-in `goose` child: its goslings, creating them, follow-ups, release, and the notices when turns end.
import { randomUUID } from "node:crypto";
import { resolve } from "node:path";
import type { CallToolResult, ReadResourceResult, Resource, ResourceTemplate } from "@modelcontextprotocol/sdk/types.js";
import { LOCAL_PRINCIPAL, type BackgroundWork, type CallContext } from "../../children/child.js";
import type { ChildEvents } from "../../children/switchboard.js";
import { GaggleError } from "../../shared/errors.js";
import { VirtualChild, type VirtualTool } from "../virtual-child.js";
import { sessionName } from "./argv.js";
import { findExecutable, isDirectory } from "../../shared/fs-probes.js";
import { logger } from "../../shared/log.js";
import { probeAcp } from "./acp-probe.js";
import { acpCanTake, AcpTurns } from "./acp-turns.js";
import { ChosenTurns, RunTurns, type GooseLaunch, type GoslingTurns } from "./turns.js";
import { gooseMissing } from "./command.js";
import { runDispatch } from "./dispatch.js";
import { formatDuration } from "./format.js";
import { Gosling, type GoslingHost, type GoslingKind, type PromptEntry } from "./gosling.js";
import { checkFollowUp, checkNewGosling, type Owned } from "./limits.js";
import { mergeOptions, OptionError, parseRunOptions, type RunOption } from "../../config/virtual/goose-options.js";
import { gooseResources, gooseResourceTemplates, readGooseResource } from "./resources.js";
import type { GooseSettings } from "../../config/virtual/goose.js";
import { gooseTools } from "./tools.js";
import { GoslingWatchers, type GoslingWatcher } from "./watchers.js";
import type { Visibility } from "../visibility.js";
import { recordsToForget } from "../../shared/fair-share.js";

export type { GooseLaunch } from "./turns.js";

const DESCRIPTION = "Goose agents (goslings): start them, follow their transcripts, talk to them, release them";

/** A gosling checked by `prepareGosling`, for `openGosling` to make. */
export interface GoslingStart {
  given: RunOption[];
  owner: string;
}

export class GooseChild extends VirtualChild implements GoslingHost {
  protected readonly virtualTools: VirtualTool[];
  private readonly goslings = new Map<string, Gosling>();
  /** Gosling id -> the principal that started it. */
  private readonly owners = new Map<string, string>();
  private readonly watchers = new GoslingWatchers();
  /** Whether the installed Goose has `goose acp`, probed once when the first gosling's first turn starts. */
  private acp: Promise<boolean> | undefined;

  constructor(
    events: ChildEvents,
    readonly settings: GooseSettings,
    private readonly launch: GooseLaunch,
    private readonly visibility: Visibility,
  ) {
    super("goose", DESCRIPTION, events);
    this.virtualTools = gooseTools(this);
  }

  get maxOutputBytes(): number {
    return this.settings.maxOutputBytes;
  }
  get maxRuntimeMs(): number {
    return this.settings.maxRuntimeMinutes * 60_000;
  }
  get idleReleaseMs(): number {
    return this.settings.idleReleaseMinutes * 60_000;
  }

  /** Where goslings run unless told otherwise: [virtual.goose] cwd, absolute. */
  get defaultCwd(): string {
    return this.launch.cwd;
  }

  /** Follows every gosling's turns, notices and release; returns the way to stop. */
  watch(watcher: GoslingWatcher): () => void {
    return this.watchers.add(watcher);
  }

  all(): Gosling[] {
    return [...this.goslings.values()];
  }

  override background(): BackgroundWork[] {
    return this.all().map((gosling) => ({
      kind: "gosling",
      id: gosling.id,
      owner: this.ownerOf(gosling),
      state: gosling.working ? "working" : gosling.status,
      title: gosling.session,
      startedAt: gosling.createdAt,
      endedAt: null,
    }));
  }

  /** The goslings the caller may list and read: its principal's, unless gateway.visibility = "all". */
  visibleTo(ctx: CallContext): Gosling[] {
    const viewer = ctx.caller?.principal ?? LOCAL_PRINCIPAL;
    return this.all().filter((gosling) => this.visibility.sees(this.ownerOf(gosling), viewer));
  }

  /** What resources/list, the same for every client, may name: each gosling only when every client may read it. */
  listedGoslings(): Gosling[] {
    return this.visibility.listsWork ? this.all() : [];
  }

  /**
   * One gosling the caller may see (see visibleTo), by full id, by an unambiguous start of it (8 characters or
   * more), or by its Goose session name; without `ctx`, any gosling (gaggle's own use).
   */
  find(processId: string, ctx?: CallContext): Gosling {
    const candidates = ctx ? this.visibleTo(ctx) : this.all();
    const exact = candidates.find((gosling) => gosling.id === processId);
    if (exact) return exact;
    const matches = processId.length >= 8 ? candidates.filter((g) => g.id.startsWith(processId) || g.session === processId) : [];
    if (matches.length === 1) return matches[0]!;
    throw new GaggleError("NOT_FOUND", `no gosling with process_id "${processId}"${matches.length > 1 ? " (it matches several)" : ""}`, {
      hint: "list_goslings shows every gosling's id",
    });
  }

  /** Every gosling with its owner, as the limits count them. */
  private owned(): Owned {
    return { goslings: this.all(), ownerOf: (gosling) => this.ownerOf(gosling) };
  }

  /** The principal of the client that started `gosling` (see ClientPrincipal). */
  ownerOf(gosling: Gosling): string {
    return this.owners.get(gosling.id) ?? LOCAL_PRINCIPAL;
  }

  /**
   * Who hears of a change to `gosling`'s resources: those who may read them now. Asked at each change, since a config
   * edit may narrow gateway.visibility after someone subscribed.
   */
  private seers(gosling: Gosling): (principal: string) => boolean {
    return (principal) => this.visibility.sees(this.ownerOf(gosling), principal);
  }

  /** Only the client that started a gosling (or the lead of its team), from any of its sessions, may prompt or release it. */
  checkOwner(gosling: Gosling, ctx: CallContext): void {
    const principal = ctx.caller?.principal ?? LOCAL_PRINCIPAL;
    const owner = this.ownerOf(gosling);
    if (this.visibility.governs(owner, principal)) return;
    throw new GaggleError(
      "PERMISSION_DENIED",
      `gosling ${gosling.id} belongs to another client (${JSON.stringify(owner)}), not to you (${JSON.stringify(principal)})`,
      {
        hint: "get_gosling_status and get_gosling_output still show it; only a client with the token that started it can prompt or release it",
      },
    );
  }

  /**
   * Starts a gosling on its first prompt; returns once it is made, its turn queued. With `continueSession`, the
   * gosling lives in that existing Goose session (one an earlier, released gosling created) and its first turn
   * already resumes it.
   */
  async launchGosling(
    prompt: string,
    tokens: readonly string[],
    ctx: CallContext,
    kind: GoslingKind = "run_goose",
    cwd = this.launch.cwd,
    continueSession?: string,
    owner = ctx.caller?.principal ?? LOCAL_PRINCIPAL,
  ): Promise<{ gosling: Gosling; entry: PromptEntry }> {
    return this.openGosling(await this.prepareGosling(tokens, owner), prompt, ctx, kind, cwd, continueSession);
  }

  /** A gosling of `owner` on `tokens` (goose run flags), checked (options, room, Goose there) but not made: `openGosling` makes it. */
  async prepareGosling(tokens: readonly string[], owner: string): Promise<GoslingStart> {
    let given;
    try {
      given = parseRunOptions(tokens);
    } catch (error) {
      if (error instanceof OptionError) throw new GaggleError("INVALID_ARGS", error.message, { hint: "leave out options gaggle sets itself" });
      throw error;
    }
    checkNewGosling(this.owned(), owner, this.settings);
    if ("missing" in (await findExecutable(this.launch.command, this.launch.cwd, this.launch.env.PATH)))
      throw gooseMissing(this.launch.command, "was not found");
    return { given, owner };
  }

  /** Makes a prepared gosling in `cwd` and queues its first prompt, as launchGosling describes. */
  openGosling(
    start: GoslingStart,
    prompt: string,
    ctx: CallContext,
    kind: GoslingKind,
    cwd: string,
    continueSession: string | undefined,
  ): { gosling: Gosling; entry: PromptEntry } {
    const { given, owner } = start;
    // Looking for Goose let other starts in: the room is counted again where the gosling is made.
    checkNewGosling(this.owned(), owner, this.settings);
    const id = randomUUID();
    const options = mergeOptions(this.settings.options, given);
    const session = continueSession ?? sessionName(id);
    const turns = new ChosenTurns(() => this.turnsFor(session, options, cwd, continueSession));
    const gosling = new Gosling(id, session, kind, options, cwd, this, turns, continueSession !== undefined);
    this.goslings.set(id, gosling);
    this.owners.set(id, owner);
    const entry = gosling.send(prompt, ctx.caller?.sessionId);
    this.goslingsChanged();
    return { gosling, entry };
  }

  send(processId: string, prompt: string, ctx: CallContext): { gosling: Gosling; entry: PromptEntry; ahead: number } {
    const gosling = this.find(processId);
    checkFollowUp(gosling, this.owned(), this.settings);
    const ahead = gosling.queued.length + (gosling.running ? 1 : 0);
    return { gosling, entry: gosling.send(prompt, ctx.caller?.sessionId), ahead };
  }

  async release(gosling: Gosling, note: string): Promise<{ wasWorking: boolean; dropped: number }> {
    const wasReleased = gosling.status === "released";
    const outcome = await gosling.release(note);
    if (!wasReleased) this.watchers.emit("released", gosling);
    this.pruneReleased();
    this.events.resourceUpdated(this.name, `goslings://${gosling.id}`, this.seers(gosling));
    return outcome;
  }

  async dispatch(prompt: string, path: string | undefined, ctx: CallContext): Promise<CallToolResult> {
    let cwd = this.launch.cwd;
    if (path !== undefined) {
      cwd = resolve(this.launch.cwd, path);
      if (!(await isDirectory(cwd))) throw new GaggleError("INVALID_ARGS", `path "${path}" is not a directory (resolved to ${cwd})`);
    }
    const { gosling, entry } = await this.launchGosling(prompt, [], ctx, "dispatch_agent", cwd);
    return runDispatch(this, gosling, entry, ctx);
  }

  /**
   * How a gosling's turns run: over its own `goose acp` process when [virtual.goose] transport allows it ("auto": the
   * installed Goose lists `acp`) and every option it has takes an ACP form; otherwise one `goose run` per turn.
   */
  private async turnsFor(session: string, options: readonly RunOption[], cwd: string, continues: string | undefined): Promise<GoslingTurns> {
    const { settings } = this;
    if (settings.transport !== "run" && acpCanTake(options) && (settings.transport === "acp" || (await this.hasAcp()))) {
      return new AcpTurns({
        launch: this.launch,
        prefixArgs: settings.args,
        cwd,
        options,
        provider: settings.provider,
        model: settings.model,
        loadFrom: continues,
      });
    }
    return new RunTurns({
      launch: this.launch,
      prefixArgs: settings.args,
      session,
      cwd,
      options,
      outputFormat: settings.outputFormat,
      provider: settings.provider,
      model: settings.model,
      maxOutputBytes: settings.maxOutputBytes,
    });
  }

  private hasAcp(): Promise<boolean> {
    this.acp ??= probeAcp(this.launch, this.settings.args).then((found) => {
      logger({ child: this.name }).info(
        { command: this.launch.command, acp: found },
        found ? "goslings run over goose acp" : "goslings run over goose run: this Goose has no acp",
      );
      return found;
    });
    return this.acp;
  }

  turnStarted(gosling: Gosling, prompt: PromptEntry): void {
    this.watchers.emit("turnStarted", gosling, prompt);
  }

  notice(gosling: Gosling, text: string): void {
    this.watchers.emit("notice", gosling, text);
  }

  /** The client that sent the prompt hears that its turn ended; subscribers hear that the output changed. */
  turnEnded(gosling: Gosling, prompt: PromptEntry): void {
    const uri = `goslings://${gosling.id}/output`;
    const took = prompt.startedAt && prompt.endedAt ? prompt.endedAt.getTime() - prompt.startedAt.getTime() : 0;
    const outcome = prompt.problem ? `${prompt.state}: ${prompt.problem}` : prompt.state;
    const data = {
      message: `gosling ${gosling.id} finished prompt ${prompt.number} (${outcome}) after ${formatDuration(took)}; get_gosling_output or ${uri} has its transcript`,
      gosling: gosling.id,
      session: gosling.session,
      prompt: prompt.number,
      status: prompt.state,
      duration_ms: took,
      tokens: gosling.tokens,
      queued: gosling.queued.length,
      output: uri,
    };
    const level = prompt.state === "completed" ? "info" : "warning";
    if (prompt.sessionId !== undefined) this.events.notify(prompt.sessionId, { log: { level, logger: this.name, data }, resourceUpdated: uri });
    this.events.resourceUpdated(this.name, uri, this.seers(gosling));
    this.events.resourceUpdated(this.name, `goslings://${gosling.id}`, this.seers(gosling));
    this.watchers.emit("turnEnded", gosling, prompt);
  }

  protected override listResources(): Resource[] {
    return gooseResources(this.listedGoslings());
  }

  protected override listResourceTemplates(): ResourceTemplate[] {
    return gooseResourceTemplates();
  }

  protected override async read(uri: string, ctx: CallContext): Promise<ReadResourceResult | undefined> {
    return readGooseResource(this, uri, ctx);
  }

  protected async stopAll(): Promise<void> {
    await Promise.all(this.all().map((gosling) => this.release(gosling, "the goose child was closed")));
  }

  /** close_child_session("goose") by one principal: its own goslings are released, no one else's. */
  protected override async stopOwnedBy(principal: string): Promise<void> {
    const mine = this.all().filter((gosling) => this.visibility.governs(this.ownerOf(gosling), principal));
    await Promise.all(mine.map((gosling) => this.release(gosling, "the goose child was closed")));
  }

  /** Released goslings are kept for their transcripts, up to max_total of them; the oldest of whoever keeps the most go first. */
  private pruneReleased(): void {
    const released = this.all().filter((gosling) => gosling.status === "released");
    const forget = recordsToForget(released, this.settings.maxTotal, (gosling) => this.ownerOf(gosling));
    if (forget.length === 0) return;
    for (const gosling of forget) {
      this.goslings.delete(gosling.id);
      this.owners.delete(gosling.id);
    }
    this.goslingsChanged();
  }

  /**
   * The set of goslings changed: clients hear that resources/list did only when it names goslings (see listedGoslings);
   * otherwise the notice would change nothing and tell every client that someone started work.
   */
  private goslingsChanged(): void {
    if (this.visibility.listsWork) this.events.listChanged(this.name, "resources");
  }
}
