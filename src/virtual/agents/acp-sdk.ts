// The ACP SDK, loaded with gaggle's first agent process: building its schemas at load costs every start of gaggle
// a noticeable part of its time, and most starts run no agent.
import type * as Acp from "@agentclientprotocol/sdk";

let loaded: typeof Acp | undefined;

/** Loads the SDK once; an agent process awaits it before it starts. */
export async function loadAcp(): Promise<typeof Acp> {
  loaded ??= await import("@agentclientprotocol/sdk");
  return loaded;
}

/** The SDK, for code that runs only for an agent process already started: its handlers and what they call. */
export function acpLoaded(): typeof Acp {
  if (!loaded) throw new Error("the ACP SDK was used before an agent process loaded it");
  return loaded;
}
