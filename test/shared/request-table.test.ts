// A RequestTable is a Map by request id whose oldest entry lives in fields while it is the only one: it must read,
// change and walk as the Map it stands for, whichever of the two holds an entry.
import { describe, expect, it } from "vitest";
import { RequestTable } from "../../src/shared/link.js";

/** The same steps on a RequestTable and on a Map, compared after each. */
function both(steps: Array<["set", string | number, string] | ["delete", string | number]>): void {
  const table = new RequestTable<string>();
  const map = new Map<string | number, string>();
  for (const step of steps) {
    if (step[0] === "set") {
      table.set(step[1], step[2]);
      map.set(step[1], step[2]);
    } else {
      table.delete(step[1]);
      map.delete(step[1]);
    }
    expect(table.entries(), JSON.stringify(step)).toEqual([...map]);
    for (const id of [1, 2, 3, "1", "a", "b"]) expect(table.get(id)).toBe(map.get(id));
  }
}

describe("a RequestTable", () => {
  it("reads and walks as a Map, oldest first, through one call at a time and several", () => {
    both([
      ["set", 1, "one"],
      ["delete", 1],
      ["set", 2, "two"],
      ["set", "1", "string one"],
      ["set", 3, "three"],
      // The oldest leaves while newer ones are in flight: the next comes after them, not before.
      ["delete", 2],
      ["set", 1, "one again"],
      ["set", "1", "string one changed"],
      ["delete", "1"],
      ["delete", 3],
      ["delete", 1],
      ["set", "a", "alone"],
      ["set", "a", "alone, changed"],
      ["set", "b", "beside"],
      ["delete", "b"],
      ["delete", "a"],
      ["delete", "a"],
    ]);
  });

  it("reads and walks as a Map through a burst of many in flight, and after it", () => {
    const steps: Array<["set", string | number, string] | ["delete", string | number]> = [];
    for (let i = 0; i < 300; i++) steps.push(["set", i % 2 ? i : `id-${i}`, `value ${i}`]);
    // Scattered ends free slots in the middle, which the next requests take.
    for (let i = 0; i < 300; i += 7) steps.push(["delete", i % 2 ? i : `id-${i}`]);
    for (let i = 300; i < 320; i++) steps.push(["set", i, `value ${i}`]);
    for (let i = 0; i < 320; i++) steps.push(["delete", i % 2 || i >= 300 ? i : `id-${i}`]);
    // Empty again: the next requests find the table as it began.
    steps.push(["set", 1, "one"], ["set", "id-2", "two"], ["delete", 1], ["set", 3, "three"]);
    both(steps);
  });

  it("walks a list of its own, and is empty once cleared", () => {
    const table = new RequestTable<string>();
    table.set(1, "one");
    table.set(2, "two");
    const walked: string[] = [];
    for (const [id, value] of table.entries()) {
      table.delete(id === 1 ? 2 : 1);
      walked.push(value);
    }
    expect(walked).toEqual(["one", "two"]);
    table.set(3, "three");
    table.clear();
    expect(table.entries()).toEqual([]);
    expect(table.get(3)).toBeUndefined();
  });
});
