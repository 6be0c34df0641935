// The error that says Goose cannot be started, and how to get it.
import { GaggleError } from "../../shared/errors.js";

const INSTALL_URL = "https://block.github.io/goose/docs/getting-started/installation";

export function gooseMissing(command: string, reason: string): GaggleError {
  return new GaggleError("SERVER_FAILED", `cannot start Goose: "${command}" ${reason}`, {
    hint: `install the Goose CLI (${INSTALL_URL}), or set [virtual.goose] command to the path of your goose executable`,
  });
}
