// A sign-in a call asks for, through a client that can show a person a URL (URL-mode elicitation): the client is
// asked to open the child's authorization page, and the sign-in waits for the person to come back to gaggle.
import { randomUUID } from "node:crypto";
import type { ChildConfig } from "../../config/index.js";
import type { UrlOpener } from "../child.js";
import { signIn, SIGN_IN_WAIT_MS } from "./sign-in.js";
import { TokenStore } from "./token-store.js";

/** One sign-in per child at a time: calls that need one meanwhile wait for the one under way. */
const underWay = new Map<string, Promise<void>>();

/** Resolves once signed in; rejects with why not (declined, refused, timed out, abandoned). */
export function signInThrough(child: ChildConfig, stateDir: string, urls: UrlOpener, signal?: AbortSignal): Promise<void> {
  const store = new TokenStore(stateDir, child.name, child.url!);
  const running = underWay.get(store.file);
  if (running) return running;
  const elicitationId = randomUUID();
  const open = async (url: URL) => {
    const message = `${child.name} needs you to sign in. Open this page to sign in; gaggle goes on with the call once you have.`;
    const accepted = await urls.open({ message, url: url.href, elicitationId }, signal ?? new AbortController().signal);
    if (!accepted) throw new Error("the sign-in page was not opened (declined)");
  };
  const flow = signIn(child, store, { open, waitMs: SIGN_IN_WAIT_MS, ...(signal && { signal }) })
    .then(() => urls.completed(elicitationId))
    .finally(() => underWay.delete(store.file));
  underWay.set(store.file, flow);
  return flow;
}
