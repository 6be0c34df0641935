// fetch for the requests of a sign-in, whose network failures say which URL could not be reached and why
// (fetch's own "fetch failed" names neither).
import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js";
import { fetchFailure, GaggleError } from "../../shared/errors.js";

export function reaching(inner: FetchLike = fetch): FetchLike {
  return async (url, init) => {
    try {
      return await inner(url, init);
    } catch (error) {
      const failure = fetchFailure(error);
      if (!failure) throw error;
      // What the cause says is in this message already; chained, "fetch failed" would be repeated after it.
      throw new GaggleError("SERVER_FAILED", `could not reach ${String(url)} (${failure.code ?? failure.message})`, {
        hint: `a server of the sign-in (${new URL(url).origin}) is not answering: check that it is up and reachable from here`,
      });
    }
  };
}
