// A real program from the npm registry, for the tests that run one as a person installs it: a pinned release
// (what the test asserts is that release's behaviour), installed once per checkout into node_modules/.cache/
// (npm ci clears it), npm's own cache keeping the download.
import { execFile } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
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

  /** Installs it unless it is there; for a test's beforeAll, with room for a slow registry. */
  async install(timeoutMs = 170_000): Promise<void> {
    if (existsSync(this.bin)) return;
    mkdirSync(this.prefix, { recursive: true });
    await run("npm", ["install", "--prefix", this.prefix, "--no-audit", "--no-fund", `${this.name}@${this.version}`], { timeout: timeoutMs });
  }
}
