// One principal's connection to a database: its own temporary tables, settings and transaction, its queries run
// one at a time in its own line, so another principal's queries never wait behind them. A query past its time, or
// whose call is cancelled, is interrupted.
import type { DuckDBConnection } from "@duckdb/node-api";
import { GaggleError } from "../../shared/errors.js";
import { timerDelay } from "../../shared/timer-delay.js";
import { readAnswer, type Answer, type AnswerLimits } from "./answer.js";
import type { DuckDb } from "./database.js";
import { duckdbFailure } from "./failures.js";
import { parseSql } from "./parsed-sql.js";
import { resolveRelativePaths } from "./paths.js";
import type { ReadOnlyCheck } from "./read-only.js";

/** What a query may take: its time, and how much of the last statement's result its answer holds. */
export interface QueryLimits extends AnswerLimits {
  timeoutMs: number;
  signal?: AbortSignal | undefined;
}

/** How often an interrupt is sent again while a stopped query has not ended: one sent before it executes is lost. */
const INTERRUPT_AGAIN_MS = 50;

export class Session {
  private queue: Promise<unknown> = Promise.resolve();
  private closed = false;

  constructor(
    private readonly duckdb: DuckDb,
    private readonly connection: DuckDBConnection,
    /** Set unless the database runs statements that write: what every query is checked by before it runs. */
    private readonly readOnly: ReadOnlyCheck | undefined,
    private readonly roots: string[],
  ) {}

  /** Runs `sql` after this principal's queries before it; the answer is the last statement's result. */
  run(sql: string, limits: QueryLimits): Promise<Answer> {
    const turn = this.queue.then(() => this.runNow(sql, limits));
    this.queue = turn.catch(() => {});
    return turn;
  }

  /** Interrupts the query running, lets the queued ones fail, and closes the connection. */
  async close(): Promise<void> {
    this.closed = true;
    this.connection.interrupt();
    const repeating = setInterval(() => this.connection.interrupt(), INTERRUPT_AGAIN_MS);
    await this.queue;
    clearInterval(repeating);
    // eslint-disable-next-line no-restricted-syntax -- DuckDB's own API: closing a connection is synchronous in the engine.
    this.connection.closeSync();
  }

  private async runNow(sql: string, limits: QueryLimits): Promise<Answer> {
    limits.signal?.throwIfAborted();
    if (this.closed) throw new GaggleError("EXECUTION_ERROR", "the database was closed (close_child_session) before the query ran");
    let stopped: "timeout" | "cancelled" | undefined;
    let repeating: NodeJS.Timeout | undefined;
    const stop = (why: "timeout" | "cancelled") => {
      stopped ??= why;
      this.connection.interrupt();
      repeating ??= setInterval(() => this.connection.interrupt(), INTERRUPT_AGAIN_MS);
    };
    const timer = setTimeout(() => stop("timeout"), timerDelay(limits.timeoutMs));
    const onAbort = () => stop("cancelled");
    limits.signal?.addEventListener("abort", onAbort, { once: true });
    try {
      const parsed = await parseSql(this.connection, sql);
      await this.readOnly?.check(this.connection, sql, parsed);
      const text = parsed.kind === "queries" ? resolveRelativePaths(sql, parsed.statements, this.roots[0]!) : sql;
      const extracted = await this.connection.extractStatements(text);
      if (extracted.count === 0) throw new GaggleError("INVALID_ARGS", "the query holds no SQL statement");
      let answer: Answer | undefined;
      for (let index = 0; index < extracted.count; index++) {
        const prepared = await extracted.prepare(index);
        try {
          if (stopped || this.closed) throw new Error("stopped before it ran");
          // A statement before the last runs (a write, to its end) and its rows are left unread; the last one's
          // rows are read as the answer needs them.
          if (index < extracted.count - 1) await prepared.runAndReadUntil(1);
          else answer = await readAnswer(this.duckdb, await prepared.stream(), extracted.count, limits);
        } finally {
          // A prepared statement keeps what it last ran until it is destroyed, which the garbage collector, blind
          // to native memory, would leave for long.
          // eslint-disable-next-line no-restricted-syntax -- DuckDB's own API: destroying a prepared statement is synchronous in the engine.
          prepared.destroySync();
        }
      }
      return answer!;
    } catch (error) {
      if (error instanceof GaggleError) throw error;
      if (stopped === "timeout") {
        throw new GaggleError("TIMEOUT", `the query was interrupted after ${limits.timeoutMs} ms ([virtual.duckdb] timeout_ms)`, {
          hint: "narrow the query (a WHERE, a LIMIT), or raise [virtual.duckdb] timeout_ms",
        });
      }
      if (stopped === "cancelled") throw new GaggleError("EXECUTION_ERROR", "the query was interrupted: its call was cancelled");
      if (this.closed) throw new GaggleError("EXECUTION_ERROR", "the query was interrupted: the database was closed (close_child_session)");
      throw duckdbFailure(error, this.roots);
    } finally {
      clearTimeout(timer);
      clearInterval(repeating);
      limits.signal?.removeEventListener("abort", onAbort);
    }
  }
}
