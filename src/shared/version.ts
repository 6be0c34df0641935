// gaggle's own name and version, read once from package.json.
import { createRequire } from "node:module";

const pkg = createRequire(import.meta.url)("../../package.json") as { name: string; version: string };

export const GAGGLE_NAME = "gaggle";
export const GAGGLE_VERSION: string = pkg.version;
