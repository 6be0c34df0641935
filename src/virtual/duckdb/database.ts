// One DuckDB database (a file, or memory) opened once and confined to the roots, with a connection per principal:
// one principal's temporary tables and settings are not another's, nor do its queries queue before another's.
import type * as DuckDbModule from "@duckdb/node-api";
import type { DuckDBInstance } from "@duckdb/node-api";
import type { StringAccess } from "./cells.js";
import { ReadOnlyCheck } from "./read-only.js";
import { Session } from "./session.js";

/** The optional module, loaded on first use, and the part of its bindings that reads cells in part. */
export interface DuckDb {
  api: typeof DuckDbModule;
  strings: StringAccess;
}

/** What every database of the child is opened with. */
export interface OpenOptions {
  roots: string[];
  readWrite: boolean;
  memoryLimitMb: number;
}

export class Database {
  /** One per principal, connected on its first query and kept until the database closes. */
  private readonly sessions = new Map<string, Promise<Session>>();

  private constructor(
    private readonly duckdb: DuckDb,
    private readonly instance: DuckDBInstance,
    /** Set unless the database runs statements that write: what every query is checked by before it runs. */
    private readonly readOnly: ReadOnlyCheck | undefined,
    private readonly roots: string[],
  ) {}

  /**
   * `path` is ":memory:" or a database file under the roots (checked by the caller). File access is limited to
   * `roots` and locked, so no query can reach a file outside them, nor lift the limit.
   */
  static async open(duckdb: DuckDb, path: string, { roots, readWrite, memoryLimitMb }: OpenOptions): Promise<Database> {
    const options: Record<string, string> = {
      ...(path !== ":memory:" && !readWrite && { access_mode: "READ_ONLY" }),
      // Memory is bounded and nothing spills to disk: a query past the limit fails, and no temporary files are written.
      memory_limit: `${memoryLimitMb}MB`,
      temp_directory: "",
    };
    const instance = await duckdb.api.DuckDBInstance.create(path, options);
    try {
      const readOnly = await confine(instance, roots, !readWrite);
      return new Database(duckdb, instance, readOnly, roots);
    } catch (error) {
      // eslint-disable-next-line no-restricted-syntax -- DuckDB's own API: closing an instance is synchronous in the engine.
      instance.closeSync();
      throw error;
    }
  }

  /** The principal's own connection to this database. */
  session(principal: string): Promise<Session> {
    let connecting = this.sessions.get(principal);
    if (!connecting) {
      connecting = this.instance.connect().then((connection) => new Session(this.duckdb, connection, this.readOnly, this.roots));
      this.sessions.set(principal, connecting);
      connecting.catch(() => this.sessions.delete(principal));
    }
    return connecting;
  }

  /** Interrupts what the principal runs, lets its queued queries fail, and closes its connection. */
  async closeSession(principal: string): Promise<void> {
    const connecting = this.sessions.get(principal);
    this.sessions.delete(principal);
    await (await connecting?.catch(() => undefined))?.close();
  }

  /** Interrupts what every principal runs, lets their queued queries fail, and closes the database. */
  async close(): Promise<void> {
    const open = [...this.sessions.values()];
    this.sessions.clear();
    await Promise.all(open.map(async (connecting) => (await connecting.catch(() => undefined))?.close()));
    // eslint-disable-next-line no-restricted-syntax -- DuckDB's own API: closing an instance is synchronous in the engine.
    this.instance.closeSync();
  }
}

/**
 * Limits file access to `roots` and locks DuckDB's configuration: global settings, which every connection made
 * later has. A database that only reads answers what its queries are checked by.
 */
async function confine(instance: DuckDBInstance, roots: string[], readOnly: boolean): Promise<ReadOnlyCheck | undefined> {
  const setup = await instance.connect();
  try {
    const quote = (text: string) => `'${text.replaceAll("'", "''")}'`;
    // DuckDB checks a relative path as it stands against gaggle's working directory: queries name files absolutely.
    await setup.run(`SET allowed_directories = [${roots.map(quote).join(", ")}]`);
    await setup.run("SET enable_external_access = false");
    await setup.run("SET lock_configuration = true");
    return readOnly ? await ReadOnlyCheck.of(setup) : undefined;
  } finally {
    // eslint-disable-next-line no-restricted-syntax -- DuckDB's own API: closing a connection is synchronous in the engine.
    setup.closeSync();
  }
}
