// The loopback listener a sign-in's browser comes back to (RFC 8252 section 7.3): open only for one flow, on
// 127.0.0.1, answering only /callback. A redirect without the flow's state is refused and the wait goes on, so a
// page that guesses the port cannot end someone else's sign-in; the first redirect with the state settles it.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export interface RedirectListener {
  port: number;
  redirectUrl: string;
  /** The authorization code, once a redirect with the right state came back and passed `check`. */
  code: Promise<string>;
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
  const server: Server = createServer((request, response) => {
    const url = new URL(request.url ?? "/", "http://127.0.0.1");
    if (url.pathname !== "/callback") return void response.writeHead(404).end("gaggle sign-in: nothing here\n");
    if (url.searchParams.get("state") !== options.state) {
      return void response.writeHead(400).end("gaggle sign-in: this redirect does not carry the state of the sign-in under way; ignored\n");
    }
    const error = url.searchParams.get("error");
    const given = url.searchParams.get("code");
    const refusal = error
      ? `the authorization server refused the sign-in: ${error} ${url.searchParams.get("error_description") ?? ""}`.trim()
      : !given
        ? "the redirect carries no authorization code"
        : options.check(url.searchParams);
    response.writeHead(refusal ? 400 : 200, { "content-type": "text/plain" });
    response.end(refusal ? `gaggle sign-in failed: ${refusal}\n` : "gaggle: signed in; you can close this tab.\n");
    if (refusal) settle.reject(new Error(refusal));
    else settle.resolve(given!);
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
    close: () => {
      clearTimeout(timer);
      options.signal?.removeEventListener("abort", abandon);
      server.close();
      server.closeAllConnections();
    },
  };
}
