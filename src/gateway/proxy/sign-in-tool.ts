// The tool proxy and search modes list in place of a child that needs a person to sign in (`NAME__authenticate`):
// its call sends the person to the child's sign-in page, through the client when it can open URLs, else by
// answering with the page's address and the shell command. Once signed in, the child's own lists replace it.
import type { CallToolResult, Tool } from "@modelcontextprotocol/sdk/types.js";
import type { CallContext, Child, UrlOpener } from "../../children/child.js";
import type { Router } from "../../children/router.js";
import { GaggleError } from "../../shared/errors.js";
import { jsonResult } from "../../shared/tool-results.js";

/** The name it is listed under: `<prefix>__authenticate`, the child's name standing in for an empty prefix. */
export const SIGN_IN_TOOL = "authenticate";

export function signInTool(child: string): Tool {
  return {
    name: SIGN_IN_TOOL,
    description:
      `Sign in to ${child}, which needs you to sign in before its tools can be listed. Sends you to its sign-in page ` +
      `(through this client when it can open a page, else it answers with the page's address); once you have signed ` +
      `in, ${child}'s tools are listed in place of this one.`,
    inputSchema: { type: "object", properties: {} },
    annotations: { readOnlyHint: false, openWorldHint: true },
  };
}

/**
 * With a client that can open URLs, the call lasts the sign-in and ends with the child's tools listed. Without,
 * the sign-in runs on in the background (the redirect comes back to gaggle's loopback listener, so the browser
 * must run where gaggle does) and the call answers at once with the page's address and `gaggle auth login NAME`,
 * for a browser on another machine.
 */
export async function authenticate(router: Router, child: Child, ctx: CallContext, command: string): Promise<CallToolResult> {
  // A sign-in made meanwhile elsewhere (`gaggle auth login` in a shell) needs no other.
  if (!child.status().needsAuth || (await startsNow(child))) return signedIn(child);
  const urls = ctx.caller?.urls;
  if (urls) {
    try {
      await router.signIn(child.name, urls, ctx.cancel?.signal);
    } catch (error) {
      throw signInUnfinished(child.name, command, error);
    }
    return signedIn(child);
  }
  let shown!: (url: string) => void;
  const page = new Promise<string>((resolve) => (shown = resolve));
  const opener: UrlOpener = {
    open: ({ url }) => {
      shown(url);
      return Promise.resolve(true);
    },
    completed: () => {},
  };
  // Its end is heard by the clients: the child's start once signed in tells them its lists changed.
  const flow = router.signIn(child.name, opener).then(() => child.tools());
  const first = await Promise.race([page, flow.then(() => undefined)]).catch((error: unknown) => {
    throw signInUnfinished(child.name, command, error);
  });
  if (first === undefined) return signedIn(child);
  flow.catch(() => {}); // The person may never come back; the flow's own wait ends it.
  return jsonResult({
    server_id: child.name,
    status: "sign_in_needed",
    url: first,
    message:
      `Open this page to sign in to ${child.name}; once you have, its tools are listed (your client is told the list ` +
      `changed). The page sends the browser back to this machine: if the browser runs elsewhere, run ` +
      `\`${command}\` in a shell here instead and paste the address the browser ends on.`,
    command,
  });
}

/** True when the child starts now (a sign-in made since it was refused); false when it still needs one. */
async function startsNow(child: Child): Promise<boolean> {
  try {
    await child.tools();
    return true;
  } catch (error) {
    if (error instanceof GaggleError && error.code === "AUTH_REQUIRED") return false;
    throw error;
  }
}

async function signedIn(child: Child): Promise<CallToolResult> {
  const tools = await child.tools();
  return jsonResult({
    server_id: child.name,
    status: "signed_in",
    message: `Signed in to ${child.name}: its ${tools.length} tool(s) are listed now in place of this one.`,
  });
}

function signInUnfinished(child: string, command: string, error: unknown): GaggleError {
  const why = error instanceof Error ? error.message : String(error);
  return new GaggleError("AUTH_REQUIRED", `${child} needs you to sign in, and the sign-in did not finish: ${why}`, {
    hint: `run: ${command}`,
  });
}
