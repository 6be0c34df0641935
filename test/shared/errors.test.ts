// A hint speaks to each surface with the tools (or commands) it has, and names none it lacks.
import { describe, expect, it } from "vitest";
import { backoffRefusal } from "../../src/children/calls/call-failure.js";
import { SEARCH_WORDING, TOOL_LIST_WORDING } from "../../src/gateway/meta/meta-tools.js";
import { GaggleError, sayToPerson, sayWithMetaTools } from "../../src/shared/errors.js";

describe("the hint of a child backing off after failed starts", () => {
  const refusal = backoffRefusal("broken", 2, 1500, "failed to start: exited (code 1)", []);

  it("names get_child_status and close_child_session where the meta-tools are listed", () => {
    expect(refusal.hintFor(sayWithMetaTools)).toBe(
      'fix the cause the last error names; get_child_status("broken") shows why, and close_child_session("broken") starts it again at once',
    );
  });

  it("names gaggle doctor to a person, and no tool where none shows a child's state", () => {
    expect(refusal.hintFor(sayToPerson)).toBe("fix the cause the last error names; `gaggle doctor broken` starts it and shows its stderr");
    for (const wording of [SEARCH_WORDING, TOOL_LIST_WORDING]) expect(refusal.hintFor(wording.lookup)).toBe("fix the cause the last error names");
  });

  it("is the sign-in's own when the child needs a person to sign in", () => {
    const signIn = new GaggleError("AUTH_REQUIRED", "remote needs a sign-in", { hint: "run: gaggle auth login remote" });
    expect(backoffRefusal("remote", 1, 1000, "needs a sign-in", [], signIn)).toBe(signIn);
  });
});
