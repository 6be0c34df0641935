// The process-wide pino logger: JSON lines on fd 2 only (stdout carries the protocol), secrets redacted.
import { pino, type Logger, type LevelWithSilent } from "pino";
import { errSerializer } from "./log-errors.js";

/** Values under these keys never reach the log, at whatever depth pino's redaction reaches. */
const REDACTED_PATHS = [
  "env",
  "headers",
  "*.env",
  "*.headers",
  "*.*.env",
  "*.*.headers",
  "token",
  "*.token",
  "authorization",
  "*.authorization",
  "auth_token",
  "*.auth_token",
  "auth_tokens",
  "*.auth_tokens",
  "api_key",
  "*.api_key",
  "apiKey",
  "*.apiKey",
  "access_token",
  "*.access_token",
  "accessToken",
  "*.accessToken",
  "authTokens",
  "*.authTokens",
];

export type { Logger };

type Destination = ReturnType<typeof pino.destination>;

/** Where logs go: stderr, or the file a daemon logs to (see logToFile). */
let destination: Destination = pino.destination({ fd: 2, sync: true });
let currentLevel: LevelWithSilent = "info";
let root: Logger = createLogger("info");

function createLogger(level: LevelWithSilent): Logger {
  currentLevel = level;
  return pino(
    {
      name: "gaggle",
      level,
      base: { pid: process.pid },
      redact: { paths: REDACTED_PATHS, censor: "[redacted]" },
      serializers: { err: errSerializer(level === "debug" || level === "trace") },
    },
    destination,
  );
}

/**
 * From now on, logs are appended to `file` (a daemon, which has no stderr anyone reads); written in the
 * background, so a log line never waits on the disk. `reopenLog` opens the file again after it was rotated away.
 */
export function logToFile(file: string): void {
  destination = pino.destination({ dest: file, sync: false, append: true, mkdir: true });
  root = createLogger(currentLevel);
}

/** `file`: the path the log now has, when it was moved rather than rotated away. */
export function reopenLog(file?: string): void {
  destination.reopen(file);
}

/** Writes out what the log still buffers: called before the process exits. */
export function flushLog(): void {
  try {
    // eslint-disable-next-line no-restricted-syntax -- synchronous: the process exits next, so the write must end before this returns.
    destination.flushSync();
  } catch {
    // Nothing buffered, or a destination not ready yet: nothing to lose.
  }
}

export function setLogLevel(level: LevelWithSilent): void {
  root = createLogger(level);
}

/** A logger bound to one subsystem (and, for children, one child name). */
export function logger(bindings: Record<string, string>): Logger {
  return root.child(bindings);
}

/**
 * For module-level loggers: bound when first used rather than at import, so that a level set by the
 * command line after the modules loaded still applies to them.
 */
export function lazyLogger(bindings: Record<string, string>): Logger {
  let bound: Logger | undefined;
  return new Proxy({} as Logger, {
    get: (_target, key) => {
      bound ??= logger(bindings);
      const value = Reflect.get(bound, key) as unknown;
      return typeof value === "function" ? value.bind(bound) : value;
    },
  });
}
