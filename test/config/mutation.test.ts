// Mutated config files, the bounded version of `npm run chaos`'s attack: what `gaggle validate` reads is found
// valid or invalid (a ConfigError listing the problems), never anything thrown beside it.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigError, validateConfigText } from "../../src/config/index.js";
import { configProblems } from "../../src/gateway/gaggle.js";
import { configMutants, seeded } from "../helpers/chaos.js";
import { ROOT } from "../helpers/paths.js";

const MUTANTS = 300;
const dir = mkdtempSync(join(tmpdir(), "gaggle-mutants-"));
const env = { HOME: dir, PATH: process.env.PATH, USER: "test" };

/** What `gaggle validate` makes of a config text: exit 0, exit 1, or whatever else was thrown. */
function validate(text: string, format: string): "valid" | "invalid" | Error {
  try {
    const config = validateConfigText(text, join(dir, `children_config.${format}`), env);
    return configProblems(config).length > 0 ? "invalid" : "valid";
  } catch (error) {
    return error instanceof ConfigError ? "invalid" : (error as Error);
  }
}

describe("mutated config files", () => {
  it("are each found valid or invalid: types flipped, keys deleted, renamed or added, odd unicode, huge numbers, text damage", () => {
    const random = seeded(13);
    const bases = configMutants.baseDocuments(ROOT);
    const outcomes = { valid: 0, invalid: 0 };
    for (let i = 0; i < MUTANTS; i++) {
      const { format, text, ops } = configMutants.mutant(random, bases);
      const outcome = validate(text, format);
      expect({ ops, text: text.slice(0, 200), outcome }).toEqual({
        ops,
        text: text.slice(0, 200),
        outcome: expect.stringMatching(/^(valid|invalid)$/),
      });
      outcomes[outcome as "valid" | "invalid"]++;
    }
    // Both outcomes come up, so the check is not only of broken files.
    expect(outcomes.valid).toBeGreaterThan(10);
    expect(outcomes.invalid).toBeGreaterThan(MUTANTS / 2);
  });

  it("refuses a JSON value nested 10,000 deep with a ConfigError", () => {
    const probes = configMutants.deepProbes().filter(({ format, ops }) => format === "json" && ops[0]!.includes("10000"));
    expect(probes).toHaveLength(2);
    for (const { text } of probes) expect(validate(text, "json")).toBe("invalid");
  });
});
