// A real Prometheus scrapes gaggle's /metrics, and promtool finds nothing wrong with what it serves.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fixtureChild, NO_BUILT_INS } from "../../helpers/paths.js";
import { until } from "../../helpers/poll.js";
import { get, json, startAdminGaggle, type AdminGaggle } from "./helpers.js";

const PROMETHEUS = "/usr/bin/prometheus";
const PROMTOOL = "/usr/bin/promtool";

async function freePort(): Promise<number> {
  const server = createServer().listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

interface QueryResult {
  data: { result: Array<{ metric: Record<string, string>; value: [number, string] }> };
}

describe("gaggle's metrics in Prometheus", () => {
  let gaggle: AdminGaggle;
  let prometheus: ChildProcess;
  let api: string;
  const dir = mkdtempSync(join(tmpdir(), "gaggle-prometheus-"));

  beforeAll(async () => {
    gaggle = await startAdminGaggle(`${NO_BUILT_INS}\n${fixtureChild("echo", "echo.mjs")}`);
    const target = new URL(gaggle.admin).host;
    writeFileSync(
      join(dir, "prometheus.yml"),
      `global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: gaggle\n    static_configs:\n      - targets: ["${target}"]\n`,
    );
    const port = await freePort();
    api = `http://127.0.0.1:${port}/api/v1`;
    prometheus = spawn(
      PROMETHEUS,
      [`--config.file=${join(dir, "prometheus.yml")}`, `--storage.tsdb.path=${join(dir, "data")}`, `--web.listen-address=127.0.0.1:${port}`],
      { stdio: "ignore" },
    );
  });
  afterAll(async () => {
    if (prometheus && prometheus.exitCode === null) {
      prometheus.kill("SIGTERM");
      await once(prometheus, "exit");
    }
    await gaggle?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const query = async (expression: string) =>
    (await json<QueryResult>(`${api}/query?query=${encodeURIComponent(expression)}`).catch(() => ({ data: { result: [] } }))).data.result;

  it("scrapes the call durations with their labels, and the children's state", async () => {
    await gaggle.meta("execute_child_tool", { server_id: "echo", tool_name: "echo", arguments: { text: "scraped" } });
    await until(
      () => query('up{job="gaggle"}'),
      (result) => result[0]?.value[1] === "1",
      20_000,
    );
    const calls = await until(
      () => query('mcp_client_operation_duration_seconds_count{gaggle_child="echo"}'),
      (result) => result.length > 0,
      20_000,
    );
    expect(calls[0]!.metric).toMatchObject({ mcp_method_name: "tools/call", gen_ai_tool_name: "echo", network_transport: "pipe" });
    expect(calls[0]!.value[1]).toBe("1");
    const up = await query('gaggle_child_up{gaggle_child="echo"}');
    expect(up[0]!.value[1]).toBe("1");
    expect((await query("process_resident_memory_bytes")).length).toBe(1);
  });

  it("passes promtool's check of the exposition format", async () => {
    const text = (await get(`${gaggle.admin}metrics`)).body;
    const check = spawnSync(PROMTOOL, ["check", "metrics"], { input: text, encoding: "utf8" });
    expect(check.stdout + check.stderr).toBe("");
    expect(check.status).toBe(0);
  });
});
