// A real program from the npm registry, for the tests that run one as a person installs it: a pinned release
// (what the test asserts is that release's behaviour), installed once per checkout into node_modules/.cache/
// (npm ci clears it), npm's own cache keeping the download.
import { execFile } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { ROOT } from "./paths.js";

const run = promisify(execFile);

export class PinnedPackage {
  /** Where it is installed: node_modules/.cache/gaggle-test-FOLDER/VERSION. */
  readonly prefix: string;

  /** `command`: the command it installs, whose presence says the install finished. */
  constructor(
    folder: string,
    readonly name: string,
    readonly version: string,
    private readonly command: string,
  ) {
    this.prefix = join(ROOT, "node_modules", ".cache", `gaggle-test-${folder}`, version);
  }

  /** The path of the command it installs. */
  get bin(): string {
    return join(this.prefix, "node_modules", ".bin", this.command);
  }

  /**
   * Installs it unless it is there; for a test's beforeAll, with room for a slow registry. Test files run at once may
   * install the same release together: each installs into a folder of its own, moved into place whole, and the one
   * that finds it there already leaves its own.
   */
  async install(timeoutMs = 170_000): Promise<void> {
    if (existsSync(this.bin)) return;
    mkdirSync(dirname(this.prefix), { recursive: true });
    const mine = mkdtempSync(`${this.prefix}.installing-`);
    try {
      await run("npm", ["install", "--prefix", mine, "--no-audit", "--no-fund", `${this.name}@${this.version}`], { timeout: timeoutMs });
      if (!existsSync(this.bin)) {
        // What an install cut short left there: a finished install is moved into place whole, with its command.
        rmSync(this.prefix, { recursive: true, force: true });
        renameSync(mine, this.prefix);
      }
    } catch (error) {
      if (!existsSync(this.bin)) throw error;
    } finally {
      rmSync(mine, { recursive: true, force: true });
    }
  }
}
