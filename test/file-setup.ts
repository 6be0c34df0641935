// Each test file is a user of its own: a state folder of its own (sign-ins, the catalog of children's lists,
// built-in children's logs), so that what one file's gateways leave behind never changes another file's.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

process.env.XDG_STATE_HOME = mkdtempSync(join(tmpdir(), "state-"));
