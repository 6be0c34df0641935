import { describe, expect, it } from "vitest";
import { editDistance, nearest } from "../../src/shared/suggest.js";

describe("editDistance", () => {
  it("counts insertions, deletions and substitutions", () => {
    expect(editDistance("", "")).toBe(0);
    expect(editDistance("abc", "")).toBe(3);
    expect(editDistance("kitten", "sitting")).toBe(3);
    expect(editDistance("comand", "command")).toBe(1);
    expect(editDistance("flaw", "lawn")).toBe(2);
  });
});

describe("nearest", () => {
  const keys = ["command", "args", "env", "cwd", "url", "headers", "timeout_ms", "max_timeout_ms"];

  it("suggests the closest candidate for a typo", () => {
    expect(nearest("comand", keys)).toBe("command");
    expect(nearest("header", keys)).toBe("headers");
    expect(nearest("timeout_sm", keys)).toBe("timeout_ms");
  });

  it("returns undefined when nothing is close enough", () => {
    expect(nearest("description", keys)).toBeUndefined();
    expect(nearest("zzz", [])).toBeUndefined();
  });

  it("allows max(2, floor(len/3)) edits", () => {
    // "abcdefghi" has length 9: up to 3 edits.
    expect(nearest("abcdefghi", ["abcdefxyz"])).toBe("abcdefxyz");
    expect(nearest("abcdefghi", ["abcdewxyz"])).toBeUndefined();
    // Short words still get 2 edits.
    expect(nearest("ab", ["xy"])).toBe("xy");
    expect(nearest("ab", ["xyz"])).toBeUndefined();
  });

  it("ignores case, preferring the exact-case candidate on a tie", () => {
    expect(nearest("COMMAND", keys)).toBe("command");
    expect(nearest("Echo", ["echo", "ECHO"])).toBe("echo");
  });

  it("takes a candidate the word begins or ends at a word boundary when none is a typo away", () => {
    expect(nearest("timeout", keys)).toBe("timeout_ms");
    expect(nearest("max_timeout", keys)).toBe("max_timeout_ms");
    expect(nearest("env_vars", keys)).toBe("env");
    expect(nearest("server_url", keys)).toBe("url");
    expect(nearest("timeout", ["maxTimeout"])).toBe("maxTimeout");
    expect(nearest("issue", ["list_issues", "get_issue"])).toBe("get_issue");
    // Not at a boundary, too short, or the nearer in length first.
    expect(nearest("time", ["timeout_ms"])).toBeUndefined();
    expect(nearest("ms_x", ["timeout_ms"])).toBeUndefined();
    expect(nearest("auth", ["auth_tokens", "auth_token"])).toBe("auth_token");
  });

  it("prefers the nearer candidate, then the earlier one", () => {
    expect(nearest("github2", ["gitlab", "github"])).toBe("github");
    expect(nearest("cat", ["bat", "hat"])).toBe("bat");
  });
});
