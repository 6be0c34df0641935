// Which kept records of finished work are forgotten: the oldest of whoever keeps the most, never another's first.
import { describe, expect, it } from "vitest";
import { recordsToForget } from "../../src/shared/fair-share.js";

/** Records named by owner and number, oldest first. */
const owner = (record: string) => record.split(":")[0]!;

describe("recordsToForget", () => {
  it("forgets nothing within the limit", () => {
    expect(recordsToForget(["ann:1", "bob:1"], 2, owner)).toEqual([]);
    expect(recordsToForget([], 0, owner)).toEqual([]);
  });

  it("with one principal, forgets the oldest", () => {
    expect(recordsToForget(["ann:1", "ann:2", "ann:3", "ann:4"], 1, owner)).toEqual(["ann:1", "ann:2", "ann:3"]);
  });

  it("forgets from whoever keeps the most, so one principal's flood pushes out its own records", () => {
    const kept = ["bob:1", "ann:1", "ann:2", "ann:3", "ann:4", "bob:2"];
    expect(recordsToForget(kept, 4, owner)).toEqual(["ann:1", "ann:2"]);
  });

  it("between principals keeping as many, forgets the older record first", () => {
    expect(recordsToForget(["bob:1", "ann:1", "ann:2", "bob:2"], 2, owner)).toEqual(["bob:1", "ann:1"]);
    expect(recordsToForget(["ann:1", "bob:1", "bob:2", "ann:2", "cat:1"], 2, owner)).toEqual(["ann:1", "bob:1", "bob:2"]);
  });

  it("forgets every record when none may be kept", () => {
    expect(recordsToForget(["ann:1", "bob:1"], 0, owner)).toEqual(["ann:1", "bob:1"]);
    expect(recordsToForget(["ann:1"], -2, owner)).toEqual(["ann:1"]);
  });

  it("counts the records it may not forget, and forgets only the others", () => {
    const live = (record: string) => record.endsWith("live");
    const kept = ["bob:1", "ann:1", "ann:live", "ann:live", "bob:live"];
    expect(recordsToForget(kept, 3, owner, (record) => !live(record))).toEqual(["ann:1", "bob:1"]);
    expect(recordsToForget(["ann:live", "ann:live", "bob:1"], 1, owner, (record) => !live(record))).toEqual(["bob:1"]);
  });
});
