import { afterAll, describe, expect, it } from "vitest";
import { expandEnv, expandString, loadConfig } from "../../src/config/index.js";
import { CLIENT_ENV_HINT } from "../../src/config/expand.js";
import { configError, tempDir } from "./files.js";

describe("expandString", () => {
  const env = { HOME: "/home/me", EMPTY: "", PORT: "9000" };

  it("replaces ${VAR} with its value", () => {
    expect(expandString("${HOME}/bin", env)).toEqual({ value: "/home/me/bin" });
    expect(expandString("http://localhost:${PORT}/${PORT}", env)).toEqual({ value: "http://localhost:9000/9000" });
    expect(expandString("${EMPTY}", env)).toEqual({ value: "" });
  });

  it("uses the default when the variable is unset or empty, as sh does", () => {
    expect(expandString("${NOPE:-8080}", env).value).toBe("8080");
    expect(expandString("${EMPTY:-fallback}", env).value).toBe("fallback");
    expect(expandString("${PORT:-8080}", env).value).toBe("9000");
    expect(expandString("${NOPE:-}", env).value).toBe("");
    expect(expandString("${NOPE:-a b:c}", env).value).toBe("a b:c");
  });

  it("reports an unset variable without a default", () => {
    const { error } = expandString("Bearer ${TOKEN}", env);
    expect(error).toMatch(
      /^environment variable TOKEN is not set \(use \$\{TOKEN:-default\} to give a default\); an MCP client starts gaggle with its own environment/,
    );
    expect(error).toContain("Codex passes only those its entry names in env_vars");
  });

  it("says once per string that a client may leave variables out", () => {
    const { error } = expandString("${A}:${B}", env);
    expect(error).toBe(
      `environment variable A is not set (use \${A:-default} to give a default); environment variable B is not set (use \${B:-default} to give a default)${CLIENT_ENV_HINT}`,
    );
    expect(expandString("${", env).error).not.toContain(CLIENT_ENV_HINT);
  });

  it("leaves a $ that does not open ${...} alone", () => {
    expect(expandString("cost: $5, $HOME, a$b", env)).toEqual({ value: "cost: $5, $HOME, a$b" });
  });

  it("rejects malformed references", () => {
    expect(expandString("${not valid}", env).error).toBe("invalid variable reference ${not valid}: expected ${NAME} or ${NAME:-default}");
    expect(expandString("${HOME", env).error).toBe('unterminated variable reference: "${" without a closing "}"');
  });

  it("does not treat ${ inside a variable's value as a reference", () => {
    expect(expandString("${WEIRD}", { WEIRD: "${x" })).toEqual({ value: "${x" });
  });
});

describe("expandEnv", () => {
  it("expands every string value at any depth, never keys or other types", () => {
    const doc = { "${K}": { list: ["${A}", 1, true, { deep: "${A:-x}" }], n: 3 } };
    const { value, issues } = expandEnv(doc, { A: "a", K: "k" });
    expect(issues).toEqual([]);
    expect(value).toEqual({ "${K}": { list: ["a", 1, true, { deep: "a" }], n: 3 } });
  });

  it("names the key path of each failure and keeps the string as written", () => {
    const doc = { mcp_servers: { github: { env: { TOKEN: "${GITHUB_TOKEN}" }, args: ["ok", "${X}"] } } };
    const { value, issues } = expandEnv(doc, {});
    expect(issues).toEqual([
      {
        path: "mcp_servers.github.env.TOKEN",
        message: `environment variable GITHUB_TOKEN is not set (use \${GITHUB_TOKEN:-default} to give a default)${CLIENT_ENV_HINT}`,
        unset: ["GITHUB_TOKEN"],
      },
      { path: "mcp_servers.github.args[1]", message: expect.stringContaining("variable X is not set"), unset: ["X"] },
    ]);
    expect(value).toEqual(doc);
  });

  it("names the variables not set only where nothing else is wrong", () => {
    const doc = { a: "${ONE}-${TWO}", b: "${ONE}-${bad name}", c: "${SET}" };
    const { issues } = expandEnv(doc, { SET: "x" });
    expect(issues.map((issue) => [issue.path, issue.unset])).toEqual([
      ["a", ["ONE", "TWO"]],
      ["b", undefined],
    ]);
  });
});

describe("expansion in loadConfig", () => {
  const tmp = tempDir();
  afterAll(() => tmp.remove());

  it("expands from the env given, with defaults", () => {
    const path = tmp.write(
      "children_config.toml",
      `[mcp_servers.github]
command = "npx"
args = ["-y", "server-github", "--port", "\${PORT:-8080}"]
env = { GITHUB_TOKEN = "\${GITHUB_TOKEN}" }
[mcp_servers.remote]
url = "\${BASE_URL}/mcp"
headers = { Authorization = "Bearer \${API_KEY:-none}" }
`,
    );
    const config = loadConfig(path, { GITHUB_TOKEN: "ghp_123", BASE_URL: "https://example.com" });
    const [github, remote] = config.children;
    expect(github?.args).toEqual(["-y", "server-github", "--port", "8080"]);
    expect(github?.env).toEqual({ GITHUB_TOKEN: "ghp_123" });
    expect(remote?.url).toBe("https://example.com/mcp");
    expect(remote?.headers).toEqual({ Authorization: "Bearer none" });
  });

  it("fails naming the key path and the variable, once per string", () => {
    const path = tmp.write(
      "missing.toml",
      `[mcp_servers.github]
command = "npx"
env = { TOKEN = "\${GITHUB_TOKEN}" }
[mcp_servers.remote]
url = "\${BASE_URL}/mcp"
`,
    );
    const err = configError(() => loadConfig(path, {}));
    // The unexpanded url would also fail URL validation; only the expansion error is reported.
    expect(err.message).toBe(
      [
        `${path}: mcp_servers.github.env.TOKEN: environment variable GITHUB_TOKEN is not set (use \${GITHUB_TOKEN:-default} to give a default)${CLIENT_ENV_HINT}`,
        `${path}: mcp_servers.remote.url: environment variable BASE_URL is not set (use \${BASE_URL:-default} to give a default)${CLIENT_ENV_HINT}`,
      ].join("\n"),
    );
  });
});
