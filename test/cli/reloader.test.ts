// A gaggle following its config file goes on following it after one change could not be followed to its end: the
// step that threw is reported, and the next edit is applied. A real gaggle core and a real file watcher; the step
// that throws is the one a daemon runs after each change (its move to the edited file's key).
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ConfigStanding, Reloader } from "../../src/cli/reload.js";
import { validateConfigText } from "../../src/config/index.js";
import { createGaggle, type Gaggle } from "../../src/gateway/gaggle.js";
import { fixtureChild, NO_BUILT_INS } from "../helpers/paths.js";
import { until } from "../helpers/poll.js";

let gaggle: Gaggle | undefined;
let reloader: Reloader | undefined;
afterEach(async () => {
  reloader?.close();
  await gaggle?.close();
});

describe("a gaggle following its config file", () => {
  it("applies the next edit after a change whose follow-up threw", async () => {
    const dir = mkdtempSync(join(tmpdir(), "gaggle-reloader-"));
    const path = join(dir, "children_config.toml");
    const text = (...children: string[]) => `[gateway]\nstate_dir = ${JSON.stringify(join(dir, "state"))}\n\n${NO_BUILT_INS}\n${children.join("\n")}`;
    writeFileSync(path, text(fixtureChild("one", "echo.mjs")));
    gaggle = createGaggle(validateConfigText(text(fixtureChild("one", "echo.mjs")), path, process.env), {
      memberBase: () => Promise.reject(new Error("no members here")),
    });
    const followed: string[] = [];
    reloader = new Reloader(gaggle, new ConfigStanding(), {
      restart: "restart it",
      followed: (edited) => {
        followed.push(edited);
        if (followed.length === 1) throw new Error("the record could not be written");
      },
    });
    const running = gaggle;
    const names = () => running.config.children.map((child) => child.name);

    writeFileSync(path, text(fixtureChild("one", "echo.mjs"), fixtureChild("two", "echo.mjs")));
    await until(
      () => followed.length,
      (count) => count === 1,
    );
    expect(names()).toEqual(["one", "two"]);

    writeFileSync(path, text(fixtureChild("one", "echo.mjs"), fixtureChild("two", "echo.mjs"), fixtureChild("three", "echo.mjs")));
    await until(names, (now) => now.includes("three"));
    expect(followed).toHaveLength(2);
  });
});
