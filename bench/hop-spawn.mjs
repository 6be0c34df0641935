// How every baseline hop (the relays, the least gateway) starts its child: as gaggle starts each child, leading a
// session and process group of its own (gaggle's shutdown reaches a child's descendants through its group). Linux
// schedules each session as a group of its own (autogroups), and a hop whose child shares its session makes other
// context switches: on one core, the bare relay measured 3% to 4% slower p50 and 10% more CPU per call that way than
// with its child in a session of its own. Started alike, the hops differ only in the work they do per call.
import { spawn } from "node:child_process";

/** The child `command args`, its stdin and stdout piped to the hop, its stderr the hop's. */
export function spawnChild(command, args) {
  return spawn(command, args, { stdio: ["pipe", "pipe", "inherit"], detached: true });
}
