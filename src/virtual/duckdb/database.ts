// One DuckDB database (a file, or memory) opened once and confined to the roots, with a connection per principal:
// one principal's temporary tables and settings are not another's, nor do its queries queue before another's.
import type * as DuckDbModule from "@duckdb/node-api";
import type { DuckDBInstance } from "@duckdb/node-api";
import { ReadOnlyCheck } from "./read-only.js";
import { Session } from "./session.js";

export type DuckDb = typeof DuckDbModule;

export class Database {
  /** One per principal, connected on its first query and kept until the database closes. */
  private readonly sessions = new Map<string, Promise<Session>>();

  private constructor(
    private readonly instance: DuckDBInstance,
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
    try {
      const readOnly = await confine(instance, roots, readWrite ? undefined : duckdb);
      return new Database(instance, readOnly, roots);
    } catch (error) {
      instance.closeSync();
      throw error;
    }
  }

  /** The principal's own connection to this database. */
  session(principal: string): Promise<Session> {
    let connecting = this.sessions.get(principal);
    if (!connecting) {
      connecting = this.instance.connect().then((connection) => new Session(connection, this.readOnly, this.roots));
      this.sessions.set(principal, connecting);
      connecting.catch(() => this.sessions.delete(principal));
    }
    return connecting;
  }

  /** Interrupts what every principal runs, lets their queued queries fail, and closes the database. */
  async close(): Promise<void> {
    const open = [...this.sessions.values()];
    this.sessions.clear();
    await Promise.all(open.map(async (connecting) => (await connecting.catch(() => undefined))?.close()));
    this.instance.closeSync();
  }
}

/**
 * Limits file access to `roots` and locks DuckDB's configuration: global settings, which every connection made
 * later has. Given `duckdb`, the database only reads: answers what its queries are checked by.
 */
async function confine(instance: DuckDBInstance, roots: string[], duckdb: DuckDb | undefined): Promise<ReadOnlyCheck | undefined> {
  const setup = await instance.connect();
  try {
    const quote = (text: string) => `'${text.replaceAll("'", "''")}'`;
    // DuckDB checks a relative path as it stands against gaggle's working directory: queries name files absolutely.
    await setup.run(`SET allowed_directories = [${roots.map(quote).join(", ")}]`);
    await setup.run("SET enable_external_access = false");
    await setup.run("SET lock_configuration = true");
    return duckdb && (await ReadOnlyCheck.of(duckdb, setup));
  } finally {
    setup.closeSync();
  }
}
