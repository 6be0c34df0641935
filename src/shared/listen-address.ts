// Where a listener binds: `PORT`, `HOST:PORT` or `[V6]:PORT`, as --http and gateway.admin take it.

export interface ListenAddress {
  host: string;
  port: number;
}

/** `PORT`, `HOST:PORT` or `[V6]:PORT`; the host defaults to loopback. */
export function parseListenAddress(text: string): ListenAddress | undefined {
  const match = /^(?:(\[[^\]]+\]|[^:]+):)?(\d{1,5})$/.exec(text);
  if (!match) return undefined;
  const port = Number(match[2]);
  if (port > 65535) return undefined;
  return { host: (match[1] ?? "127.0.0.1").replace(/^\[(.*)\]$/, "$1"), port };
}
