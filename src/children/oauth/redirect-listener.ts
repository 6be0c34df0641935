// The loopback listener a sign-in's browser comes back to (RFC 8252 section 7.3): open only for one flow, on
// 127.0.0.1, answering only /callback. A redirect without the flow's state is refused and the wait goes on, so a
// page that guesses the port cannot end someone else's sign-in; the first redirect with the state settles it.
// When the browser runs on another machine, the address it was sent back to is pasted in instead (`accept`), and
// is checked the same way.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export interface RedirectListener {
  port: number;
  redirectUrl: string;
  /** The authorization code, once a redirect with the right state came back and passed `check`. */
  code: Promise<string>;
  /**
   * A redirect URL the person pasted (the browser ran elsewhere): undefined when it settles the sign-in (with
   * its code, or with the authorization server's refusal), else why it was ignored (the wait goes on).
   */
  accept(redirect: string): string | undefined;
  close(): void;
}

/**
 * `check` sees the redirect's parameters before the code is taken: what it returns is why the redirect is
 * refused (the sign-in then fails with that reason), or undefined to accept it.
 */
export async function listenForRedirect(options: {
  port: number;
  state: string;
  waitMs: number;
  check: (params: URLSearchParams) => string | undefined;
  signal?: AbortSignal;
}): Promise<RedirectListener> {
  let settle!: { resolve: (code: string) => void; reject: (error: Error) => void };
  const code = new Promise<string>((resolve, reject) => (settle = { resolve, reject }));
  code.catch(() => {}); // Read by the flow; a listener closed before anyone waited must not crash gaggle.
  /** What a redirect's parameters come to: ignored (and why), or the sign-in settled with a code or a refusal. */
  const take = (params: URLSearchParams): { ignored: string } | { refusal: string | undefined } => {
    if (params.get("state") !== options.state) return { ignored: "this redirect does not carry the state of the sign-in under way" };
    const error = params.get("error");
    const given = params.get("code");
    const refusal = error
      ? `the authorization server refused the sign-in: ${error} ${params.get("error_description") ?? ""}`.trim()
      : !given
        ? "the redirect carries no authorization code"
        : options.check(params);
    if (refusal) settle.reject(new Error(refusal));
    else settle.resolve(given!);
    return { refusal };
  };
  const server: Server = createServer((request, response) => {
    const url = new URL(request.url ?? "/", "http://127.0.0.1");
    if (url.pathname !== "/callback") return void response.writeHead(404).end("gaggle sign-in: nothing here\n");
    const taken = take(url.searchParams);
    if ("ignored" in taken) return void response.writeHead(400).end(`gaggle sign-in: ${taken.ignored}; ignored\n`);
    response.writeHead(taken.refusal ? 400 : 200, { "content-type": "text/plain" });
    response.end(taken.refusal ? `gaggle sign-in failed: ${taken.refusal}\n` : "gaggle: signed in; you can close this tab.\n");
  });
  await new Promise<void>((resolve, reject) => server.once("error", reject).listen(options.port, "127.0.0.1", resolve));
  const timer = setTimeout(
    () => settle.reject(new Error(`no sign-in came back within ${Math.round(options.waitMs / 60_000)} minutes`)),
    options.waitMs,
  );
  const abandon = () => settle.reject(new Error("the sign-in was abandoned: the call waiting for it was cancelled"));
  options.signal?.addEventListener("abort", abandon, { once: true });
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    redirectUrl: `http://127.0.0.1:${port}/callback`,
    code,
    accept: (redirect) => {
      let url: URL;
      try {
        url = new URL(redirect.trim());
      } catch {
        return "that is not a URL: paste the whole address the browser ended on (it starts with http://127.0.0.1:)";
      }
      const taken = take(url.searchParams);
      return "ignored" in taken ? taken.ignored : undefined;
    },
    close: () => {
      clearTimeout(timer);
      options.signal?.removeEventListener("abort", abandon);
      server.close();
      server.closeAllConnections();
    },
  };
}
