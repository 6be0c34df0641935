// The banned-command check on its own: command names that are also names on every JavaScript object are plain names.
import { describe, expect, it } from "vitest";
import { refuseBanned } from "../../../src/virtual/workspace/banned.js";

describe("refuseBanned", () => {
  it("lets a command named like an object's property run, wrapper tables notwithstanding", async () => {
    for (const command of ["constructor -x", "toString", "toString -x y", "__proto__ x", "hasOwnProperty -n 1 x", "valueOf -- x"]) {
      await expect(refuseBanned(command), command).resolves.toBeUndefined();
    }
    await expect(refuseBanned("sudo constructor -x curl")).resolves.toBeUndefined();
    await expect(refuseBanned("sudo curl x")).rejects.toMatchObject({ code: "PERMISSION_DENIED" });
  });
});
