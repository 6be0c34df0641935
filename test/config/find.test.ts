import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { findConfigPath, loadConfig } from "../../src/config/index.js";
import { type TempDir, configError, tempDir } from "./files.js";

let tmp: TempDir;
beforeEach(() => {
  tmp = tempDir();
});
afterEach(() => tmp.remove());

describe("findConfigPath", () => {
  const opts = () => ({ cwd: join(tmp.dir, "project"), env: { XDG_CONFIG_HOME: join(tmp.dir, "xdg"), HOME: join(tmp.dir, "home") } });

  it("searches ./children_config.toml, ./children_config.json, then $XDG_CONFIG_HOME/gaggle/ .toml and .json", () => {
    const order = [
      "project/children_config.toml",
      "project/children_config.json",
      "xdg/gaggle/children_config.toml",
      "xdg/gaggle/children_config.json",
    ];
    // Create them from last to first: each new file must win over all the ones already there.
    for (const name of [...order].reverse()) {
      const path = tmp.write(name, "");
      expect(findConfigPath(opts())).toBe(path);
    }
  });

  it("uses ~/.config when XDG_CONFIG_HOME is unset, empty or relative", () => {
    const path = tmp.write("home/.config/gaggle/children_config.json", "{}");
    const base = { cwd: join(tmp.dir, "project"), env: { HOME: join(tmp.dir, "home") } };
    expect(findConfigPath(base)).toBe(path);
    expect(findConfigPath({ ...base, env: { ...base.env, XDG_CONFIG_HOME: "" } })).toBe(path);
    expect(findConfigPath({ ...base, env: { ...base.env, XDG_CONFIG_HOME: "rel/dir" } })).toBe(path);
  });

  it("skips directories with a config file's name", () => {
    tmp.write("project/children_config.toml/inner", "");
    const path = tmp.write("project/children_config.json", "{}");
    expect(findConfigPath(opts())).toBe(path);
  });

  it("takes an explicit path relative to cwd, and looks nowhere else", () => {
    tmp.write("project/children_config.toml", "");
    const path = tmp.write("project/conf/mine.toml", "");
    expect(findConfigPath({ ...opts(), explicit: "conf/mine.toml" })).toBe(path);
    expect(findConfigPath({ ...opts(), explicit: path })).toBe(path);

    const err = configError(() => findConfigPath({ ...opts(), explicit: "conf/other.toml" }));
    expect(err.code).toBe("not_found");
    expect(err.file).toBe(join(tmp.dir, "project/conf/other.toml"));
    expect(err.message).toBe(`${err.file}: config file not found: check the path given to --config`);
  });

  it("says a folder given is no config file, naming the config file in it when there is one", () => {
    const folder = join(tmp.dir, "project/conf");
    tmp.write("project/conf/mine.toml", "");
    expect(configError(() => findConfigPath({ ...opts(), explicit: "conf" })).message).toBe(
      `${folder}: is a folder, not a config file: give --config the path of a .toml or .json file`,
    );
    const inside = tmp.write("project/conf/children_config.json", "{}");
    expect(configError(() => findConfigPath({ ...opts(), explicit: "conf" })).message).toBe(
      `${folder}: is a folder, not a config file: give --config the file in it, ${inside}`,
    );
  });

  it("lists every place it looked when nothing is found", () => {
    const err = configError(() => findConfigPath(opts()));
    expect(err.code).toBe("not_found");
    expect(err.message).toBe(
      [
        "no config file found; looked for:",
        `  ${join(tmp.dir, "project/children_config.toml")}`,
        `  ${join(tmp.dir, "project/children_config.json")}`,
        `  ${join(tmp.dir, "xdg/gaggle/children_config.toml")}`,
        `  ${join(tmp.dir, "xdg/gaggle/children_config.json")}`,
        "create one of these (gaggle import writes one from the servers your MCP clients list), or pass --config PATH",
      ].join("\n"),
    );
  });
});

describe("loadConfig on a missing or unreadable file", () => {
  it("says the file is not found", () => {
    const path = join(tmp.dir, "nope.toml");
    const err = configError(() => loadConfig(path, {}));
    expect(err.code).toBe("not_found");
    expect(err.message).toBe(`${path}: config file not found`);
  });

  it("says why a file cannot be read", () => {
    const err = configError(() => loadConfig(tmp.dir, {}));
    expect(err.code).toBe("unreadable");
    expect(err.message).toBe(`${tmp.dir}: cannot read config file (EISDIR)`);
  });
});
