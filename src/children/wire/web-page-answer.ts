// A remote child's url that answers its POSTs with a web page: the url is a site (or a page of one), not its MCP
// endpoint. Told apart by the response's status and media type, and reported with both as fields.
import { StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

type Fetch = (url: string | URL, init?: RequestInit) => Promise<Response>;

/**
 * A POST to the endpoint answered with an HTML page. A StreamableHTTPError with the status as its code, so that
 * whatever tells a session lost by a 404 tells it here too.
 */
export class WebPageAnswer extends StreamableHTTPError {
  override readonly name = "WebPageAnswer";

  constructor(
    readonly url: string,
    readonly status: number,
    readonly mediaType: string,
  ) {
    super(status, `${url} answered with a web page (${mediaType}), not MCP`);
  }
}

/** The media type of a content-type header, lowercased, without its parameters. */
function mediaType(contentType: string | null): string {
  return (contentType?.split(";", 1)[0] ?? "").trim().toLowerCase();
}

/**
 * A web page, rather than an MCP server's refusal: served as the page asked for (2xx), as the page of a path the
 * site does not have (404), or as a site's refusal of a POST to a page (405). Other statuses (a proxy's 502 page,
 * a 401 a sign-in answers) say something about the server behind the url, and keep their own meaning.
 */
const PAGE_STATUSES = new Set([404, 405]);

/** `inner`, whose POSTs to `endpoint` that are answered with an HTML page fail with a WebPageAnswer. */
export function refusingWebPages(inner: Fetch, endpoint: URL): Fetch {
  return async (url, init) => {
    const response = await inner(url, init);
    if (init?.method !== "POST" || new URL(url).href !== endpoint.href) return response;
    const type = mediaType(response.headers.get("content-type"));
    if (type !== "text/html" && type !== "application/xhtml+xml") return response;
    if (!response.ok && !PAGE_STATUSES.has(response.status)) return response;
    await response.body?.cancel();
    throw new WebPageAnswer(endpoint.href, response.status, type);
  };
}
