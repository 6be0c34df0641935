// One DuckDB database (a file, or memory) opened once, confined to the roots, its queries run one at a time on one
// connection: a query past its time, or whose call is cancelled, is interrupted.
import type * as DuckDbModule from "@duckdb/node-api";
import type { DuckDBConnection, DuckDBInstance, DuckDBResultReader } from "@duckdb/node-api";
import { join } from "node:path";
import { GaggleError, errorMessage } from "../../shared/errors.js";
import { timerDelay } from "../../shared/timer-delay.js";
import { ReadOnlyCheck } from "./read-only.js";

/** What `run` reads of the last statement: at most `rows` rows (one more tells whether there were more). */
export interface QueryLimits {
  rows: number;
  timeoutMs: number;
  signal?: AbortSignal | undefined;
}

export interface QueryResult {
  statements: number;
  reader: DuckDBResultReader;
}

export type DuckDb = typeof DuckDbModule;

/** How often an interrupt is sent again while a stopped query has not ended: one sent before it executes is lost. */
const INTERRUPT_AGAIN_MS = 50;

export class Database {
  private queue: Promise<unknown> = Promise.resolve();
  private closed = false;

  private constructor(
    private readonly instance: DuckDBInstance,
    private readonly connection: DuckDBConnection,
    /** Set unless the database runs statements that write: what every query is checked by before it runs. */
    private readonly readOnly: ReadOnlyCheck | undefined,
    private readonly roots: string[],
  ) {}

  /**
   * `path` is ":memory:" or a database file under the roots (checked by the caller). File access is limited to
   * `roots` and locked, so no query can reach a file outside them, nor lift the limit.
   */
  static async open(duckdb: DuckDb, path: string, roots: string[], readWrite: boolean): Promise<Database> {
    const options: Record<string, string> = path === ":memory:" || readWrite ? {} : { access_mode: "READ_ONLY" };
    const instance = await duckdb.DuckDBInstance.create(path, options);
    const connection = await instance.connect();
    const quote = (text: string) => `'${text.replaceAll("'", "''")}'`;
    // DuckDB checks a relative path as it stands against gaggle's working directory: queries name files absolutely.
    await connection.run(`SET allowed_directories = [${roots.map(quote).join(", ")}]`);
    await connection.run("SET enable_external_access = false");
    await connection.run("SET lock_configuration = true");
    const readOnly = readWrite ? undefined : await ReadOnlyCheck.of(duckdb, connection);
    return new Database(instance, connection, readOnly, roots);
  }

  /** Runs `sql` after every query before it; the answer is the last statement's result. */
  run(sql: string, limits: QueryLimits): Promise<QueryResult> {
    const turn = this.queue.then(() => this.runNow(sql, limits));
    this.queue = turn.catch(() => {});
    return turn;
  }

  /** Interrupts the query running, lets the queued ones fail, and closes the database. */
  async close(): Promise<void> {
    this.closed = true;
    this.connection.interrupt();
    const repeating = setInterval(() => this.connection.interrupt(), INTERRUPT_AGAIN_MS);
    await this.queue;
    clearInterval(repeating);
    this.connection.closeSync();
    this.instance.closeSync();
  }

  private async runNow(sql: string, limits: QueryLimits): Promise<QueryResult> {
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
      await this.readOnly?.check(this.connection, sql);
      const extracted = await this.connection.extractStatements(sql);
      if (extracted.count === 0) throw new GaggleError("INVALID_ARGS", "the query holds no SQL statement");
      let reader: DuckDBResultReader | undefined;
      for (let index = 0; index < extracted.count; index++) {
        const prepared = await extracted.prepare(index);
        if (stopped || this.closed) throw new Error("stopped before it ran");
        reader = await prepared.runAndReadUntil(limits.rows + 1);
      }
      return { statements: extracted.count, reader: reader! };
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

/** DuckDB's own error, in the shape every failure has; a refused file names the roots in its hint. */
function duckdbFailure(error: unknown, roots: string[]): GaggleError {
  const message = errorMessage(error).trim();
  if (message.startsWith("Permission Error")) {
    // DuckDB reads a relative path from gaggle's working directory, which need not be under any root.
    const example = join(roots[0] ?? "/", "FILE.csv");
    return new GaggleError("PERMISSION_DENIED", message, {
      hint: `queries reach only files under the roots (${roots.join(", ")}; [virtual.duckdb] roots): name a file by its absolute path, as '${example}'`,
    });
  }
  return new GaggleError("EXECUTION_ERROR", message, { hint: "fix the SQL; DuckDB's error names the line and what it expected" });
}
