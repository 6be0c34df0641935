// The built-in `duckdb` child: SQL over files on embedded DuckDB (the `duckdb` tool of gomcptest's duckdbserver,
// with a `database` to open). Queries reach only the files under its roots; it only reads unless read_write.
import { createRequire } from "node:module";
import { resolve } from "node:path";
import { z } from "zod";
import { LOCAL_PRINCIPAL } from "../../children/child.js";
import type { ChildEvents } from "../../children/switchboard.js";
import type { DuckDbSettings } from "../../config/virtual/duckdb.js";
import { GaggleError, errorMessage } from "../../shared/errors.js";
import { canonical, isUnder } from "../../shared/fs-checks.js";
import { exists, realTarget } from "../../shared/fs-probes.js";
import { jsonResult } from "../../shared/tool-results.js";
import type { BuiltIn } from "../context.js";
import { defineTool, VirtualChild, type VirtualTool } from "../virtual-child.js";
import type { StringAccess } from "./cells.js";
import { checkDatabaseFile } from "./database-file.js";
import { Database, type DuckDb } from "./database.js";
import { openFailure } from "./failures.js";

const NAME = "duckdb";
const MEMORY = ":memory:";

class DuckDbChild extends VirtualChild {
  protected readonly virtualTools: VirtualTool[];
  /**
   * One per database file, shared by the principals that open it, and one in memory per principal; each opened on
   * first use and kept until the child is closed.
   */
  private readonly databases = new Map<string, Promise<Database>>();
  private readonly roots: string[];

  constructor(
    private readonly settings: DuckDbSettings,
    events: ChildEvents,
  ) {
    super(NAME, "SQL over CSV, Parquet and JSON files, and DuckDB databases, on embedded DuckDB", events);
    // Resolved once, as the child is made at start-up or on a reload, before it answers any call.
    this.roots = settings.roots.map((root) => canonical(root));
    this.virtualTools = [
      defineTool({
        name: "duckdb",
        title: "Query files with SQL (DuckDB)",
        description:
          "Runs SQL on DuckDB, which reads files in place: SELECT * FROM 'data.csv' (also Parquet, JSON, globs like " +
          "'logs/*.csv', and joins across them). Name files under the allowed roots, relative to the first one or " +
          "absolute. Answers with the columns and their types and the rows as JSON, capped in rows and size with a note " +
          `when cut. Allowed roots: ${this.roots.join(", ")}.` +
          (settings.readWrite
            ? " Relative paths are resolved in queries; other statements (COPY ... TO) name files absolutely."
            : " Read-only: only queries run."),
        input: z.strictObject({
          query: z.string().min(1).describe("DuckDB SQL; several statements may be given, the answer is the last one's."),
          database: z
            .string()
            .min(1)
            .describe("A DuckDB database file under the roots to open (relative to the first root); an in-memory database when not given.")
            .optional(),
        }),
        annotations: { readOnlyHint: !settings.readWrite, openWorldHint: false },
        run: async ({ query, database }, ctx) => {
          const principal = ctx.caller?.principal ?? LOCAL_PRINCIPAL;
          const session = await (await this.open(database, principal)).session(principal);
          return jsonResult(await session.run(query, { ...settings, signal: ctx.cancel?.signal }));
        },
      }),
    ];
  }

  protected async stopAll(): Promise<void> {
    const open = [...this.databases.values()];
    this.databases.clear();
    await Promise.all(open.map(async (opening) => (await opening.catch(() => undefined))?.close()));
  }

  /** The principal's in-memory database, and its connections to database files; others' stay open. */
  protected override async stopOwnedBy(principal: string): Promise<void> {
    const memory = memoryKey(principal);
    const own = this.databases.get(memory);
    this.databases.delete(memory);
    const files = [...this.databases.values()];
    await Promise.all([
      own?.then((database) => database.close()).catch(() => undefined),
      ...files.map(async (opening) => (await opening.catch(() => undefined))?.closeSession(principal)),
    ]);
  }

  private async open(database: string | undefined, principal: string): Promise<Database> {
    const path = database === undefined ? MEMORY : await this.databasePath(database);
    // From here to the map's update nothing waits: two calls for one file share one opening.
    const key = path === MEMORY ? memoryKey(principal) : path;
    let opening = this.databases.get(key);
    if (!opening) {
      opening = this.openNew(path, database);
      this.databases.set(key, opening);
      opening.catch(() => this.databases.delete(key));
    }
    return opening;
  }

  private async openNew(path: string, shown: string | undefined): Promise<Database> {
    const duckdb = loadDuckDb();
    if (shown === undefined) return Database.open(duckdb, path, { ...this.settings, roots: this.roots });
    await checkDatabaseFile(path, shown);
    return Database.open(duckdb, path, { ...this.settings, roots: this.roots }).catch((error: unknown) => {
      throw openFailure(error, shown, path);
    });
  }

  /** The database file, under the roots, symlinks followed; one that does not exist is created only by a child that writes. */
  private async databasePath(database: string): Promise<string> {
    const path = await realTarget(resolve(this.roots[0]!, database));
    if (path === undefined || !this.roots.some((root) => isUnder(path, root))) {
      throw new GaggleError("PERMISSION_DENIED", `database "${database}" is outside the roots (${this.roots.join(", ")})`, {
        hint: "give a database file under [virtual.duckdb] roots, or add its folder to roots",
      });
    }
    if (!this.settings.readWrite && !(await exists(path))) {
      throw new GaggleError("NOT_FOUND", `database file ${path} does not exist, and a read-only duckdb child creates none`, {
        hint: "give an existing database file, or set [virtual.duckdb] read_write = true to create it",
      });
    }
    return path;
  }
}

/** A file's path is absolute, so no principal's memory key is a file's. */
function memoryKey(principal: string): string {
  return `${MEMORY}${principal}`;
}

/**
 * Loaded on first query: an optional dependency with a native engine, which most configurations never load.
 * Required, not imported: the bundle runs from V8's code cache, where import() has no loader (see bundle.mjs).
 */
function loadDuckDb(): DuckDb {
  try {
    const require = createRequire(import.meta.url);
    const api = require("@duckdb/node-api") as DuckDb["api"];
    // The bindings @duckdb/node-api itself loads, found from where it is installed.
    const strings = createRequire(require.resolve("@duckdb/node-api"))("@duckdb/node-bindings") as StringAccess;
    return { api, strings };
  } catch (error) {
    throw new GaggleError("SERVER_FAILED", `the duckdb child cannot load DuckDB (@duckdb/node-api): ${errorMessage(error)}`, {
      hint: "install it beside gaggle (npm install @duckdb/node-api); it is an optional dependency, skipped where no build exists for this platform",
    });
  }
}

export const duckdbChild: BuiltIn<DuckDbSettings> = {
  create: (settings, { switchboard }) => new DuckDbChild(settings, switchboard),
  /** The optional module loaded, as the first query would load it. */
  check() {
    try {
      return { ok: true, notes: [`DuckDB ${loadDuckDb().api.version()} (@duckdb/node-api)`] };
    } catch (error) {
      return { ok: false, notes: [errorMessage(error), (error as GaggleError).hint ?? ""] };
    }
  },
};
