// `gaggle` with no subcommand: serve MCP over stdio until stdin closes or a signal arrives, then stop every child.
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import type { GaggleConfig } from "../config/index.js";
import { createGaggle } from "../gaggle.js";
import { createGatewayServer } from "../gateway/server.js";
import { logger } from "../log.js";

export async function serveStdio(config: GaggleConfig): Promise<void> {
  const log = logger({ subsystem: "serve" });
  const gaggle = createGaggle(config);
  const { server } = createGatewayServer(gaggle, "stdio");

  let stopping: Promise<void> | undefined;
  const stop = (reason: string, exitCode = 0) => {
    stopping ??= (async () => {
      log.info({ reason }, "shutting down");
      await server.close().catch(() => {});
      await gaggle.close();
      log.info("all children stopped");
      process.exit(exitCode);
    })();
    return stopping;
  };

  process.stdin.on("end", () => void stop("stdin closed"));
  process.stdin.on("error", () => void stop("stdin error"));
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.on(signal, () => void stop(signal));
  process.on("uncaughtException", (error) => {
    log.fatal({ err: error }, "uncaught exception");
    void stop("uncaught exception", 1);
  });

  await server.connect(new StdioServerTransport());
  log.info({ config: config.path, children: gaggle.router.names() }, "gaggle serving MCP on stdio");
  gaggle.startEager();
}
