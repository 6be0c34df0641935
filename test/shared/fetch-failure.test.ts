// fetch's own network failures are told from its other errors by the fields fetch gives them, never by their words.
import { createServer } from "node:net";
import { describe, expect, it } from "vitest";
import { fetchFailure } from "../../src/shared/errors.js";

/** A port nothing listens on: one the system handed out, closed again. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const failureOf = (request: () => Promise<unknown>) =>
  request().then(
    () => undefined,
    (error: unknown) => error,
  );

describe("fetchFailure", () => {
  it("names the code of a refused connection, and the message of an unresolvable host", async () => {
    const port = await closedPort();
    expect(fetchFailure(await failureOf(() => fetch(`http://127.0.0.1:${port}/`)))).toMatchObject({ code: "ECONNREFUSED" });
    const unresolved = fetchFailure(await failureOf(() => fetch("http://no-such-host.invalid/")));
    expect(unresolved?.code).toMatch(/^E[A-Z_]+$/);
    expect(unresolved?.message).toContain("no-such-host.invalid");
  });

  it("gives the reason of a request fetch refuses without sending, which has no code", async () => {
    expect(fetchFailure(await failureOf(() => fetch("http://127.0.0.1:6000/")))).toEqual({ code: undefined, message: "bad port" });
  });

  it("is undefined for a request fetch could not build, and an abort", async () => {
    expect(fetchFailure(await failureOf(() => fetch("http://exa mple/")))).toBeUndefined();
    expect(fetchFailure(await failureOf(() => fetch("http://127.0.0.1:1/", { body: "x" })))).toBeUndefined();
    expect(fetchFailure(await failureOf(() => fetch("http://127.0.0.1:1/", { signal: AbortSignal.abort() })))).toBeUndefined();
  });
});
