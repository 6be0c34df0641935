// The token that marks everything a child started: set in its environment, inherited by every descendant.
/* eslint-disable no-restricted-syntax -- synchronous: /proc answers from kernel memory and never waits on a disk. */
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";

/**
 * A process inherits its parent's environment, so the token follows every descendant of a child into any group
 * or session it moves to (setsid, a double-forking daemon), and /proc/PID/environ shows it to gaggle, a process
 * of the same user. A descendant that clears its environment (env -i) loses it, and one that runs as another
 * user (setuid) cannot be read: those two cannot be found this way.
 */
export const TOKEN_VAR = "GAGGLE_CHILD_TOKEN";

/**
 * A fresh token, appended to the tokens gaggle itself carries (when a gaggle runs another), so that the outer
 * gaggle's sweep still finds what the inner one started. 128 random bits: no environment holds it by chance.
 */
export function childToken(inherited = process.env[TOKEN_VAR]): { token: string; value: string } {
  const token = randomBytes(16).toString("hex");
  return { token, value: inherited ? `${inherited},${token}` : token };
}

/** Whether process `pid` (a /proc entry) carries `token`; false for a zombie, which has no environment left, and for another user's process. */
export function holdsToken(pid: string, token: string): boolean {
  try {
    return readFileSync(`/proc/${pid}/environ`).includes(token);
  } catch {
    return false; // it ended while we looked, or it is another user's and not ours to read
  }
}
