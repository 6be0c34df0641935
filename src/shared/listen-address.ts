// Where a listener binds: `PORT`, `HOST:PORT` or `[V6]:PORT`, as --http and gateway.admin take it.

export interface ListenAddress {
  host: string;
  port: number;
}

/** `PORT`, `HOST:PORT` or `[V6]:PORT`; the host defaults to loopback. */
export function parseListenAddress(text: string): ListenAddress | undefined {
  const match = ADDRESS.exec(text);
  if (!match) return undefined;
  const port = Number(match[2]);
  if (port > MAX_PORT) return undefined;
  return { host: (match[1] ?? "127.0.0.1").replace(/^\[(.*)\]$/, "$1"), port };
}

/** What is wrong with `text` when it has one of the forms but parseListenAddress does not take it: a port out of range. */
export function portProblem(text: string): string | undefined {
  const port = ADDRESS.exec(text)?.[2];
  return port !== undefined && Number(port) > MAX_PORT ? `port ${port} is above ${MAX_PORT} (0 picks a free one)` : undefined;
}

const ADDRESS = /^(?:(\[[^\]]+\]|[^:]+):)?(\d{1,12})$/;
const MAX_PORT = 65535;
