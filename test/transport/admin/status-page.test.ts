// The status page in a real headless Chromium: it follows a child from starting to running and counts its call,
// live, with nothing loaded from anywhere but gaggle, and shows finished background work and failed calls as they
// were. A screenshot is kept in test-output/.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type BrowserContext, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { textOf } from "../../helpers/gaggle.js";
import { startHttpGaggle } from "../../helpers/gaggle-http.js";
import { ROOT, fixtureChild } from "../../helpers/paths.js";
import { until } from "../../helpers/poll.js";
import { json, startAdminGaggle, type AdminGaggle, type Status } from "./helpers.js";

const CHROMIUM = "/usr/bin/chromium";
const OUTPUT = join(ROOT, "test-output");
/** The process child on (for background work), the other built-in ones off. */
const PROCESS_ONLY = "[virtual.goose]\nenabled = false\n\n[virtual.team]\nenabled = false\n";

describe("the status page in a browser", () => {
  let gaggle: AdminGaggle;
  let browser: BrowserContext;
  let page: Page;
  const profile = mkdtempSync(join(tmpdir(), "gaggle-chromium-"));
  /** Every URL the page asked for: nothing but gaggle's own. */
  const requested: string[] = [];
  /** The file whose appearance lets the slow child serve. */
  const gate = join(mkdtempSync(join(tmpdir(), "gaggle-gate-")), "gate");

  beforeAll(async () => {
    // A child that starts only once the test has seen the page show it starting.
    gaggle = await startAdminGaggle(
      `${PROCESS_ONLY}\n${fixtureChild("slow", "slow.mjs", `env = { SLOW_START_UNTIL = ${JSON.stringify(gate)} }`)}\n${fixtureChild("echo", "echo.mjs")}`,
    );
    browser = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: [
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
      ],
      viewport: { width: 1400, height: 900 },
    });
    page = browser.pages()[0] ?? (await browser.newPage());
    page.on("request", (request) => requested.push(request.url()));
  });
  afterAll(async () => {
    await browser?.close();
    await gaggle?.close();
    rmSync(profile, { recursive: true, force: true });
  });

  it("shows a child going from starting to running and its call being counted", async () => {
    await page.goto(gaggle.admin);
    const slow = page.locator('tr[data-child="slow"]');
    await slow.locator('[data-state="not_started"]').waitFor({ timeout: 10_000 });
    expect(await page.locator("#live").textContent()).toBe("live");

    const call = gaggle.meta("execute_child_tool", { server_id: "slow", tool_name: "echo", arguments: { text: "seen on the page" } });
    await slow.locator('[data-state="starting"]').waitFor({ timeout: 10_000 });
    writeFileSync(gate, "");
    await slow.locator('[data-state="running"]').waitFor({ timeout: 15_000 });
    await call;
    await slow.locator('td[data-calls="1"]').waitFor({ timeout: 10_000 });

    await page.locator("#calls tbody tr", { hasText: "execute_child_tool" }).first().waitFor({ timeout: 10_000 });
    expect(await page.locator("#clients").textContent()).toContain("gaggle-test");
    mkdirSync(OUTPUT, { recursive: true });
    await page.screenshot({ path: join(OUTPUT, "status-page.png"), fullPage: true });
    expect(requested.every((url) => url.startsWith(gaggle.admin))).toBe(true);
  });

  it("shows what clients and children wrote as text, never as markup", async () => {
    const name = "<img src=x onerror=alert(1)>";
    await gaggle.client.callTool({ name, arguments: {} }).catch(() => undefined);
    await page.locator("#calls tbody tr", { hasText: name }).first().waitFor({ timeout: 10_000 });
    expect(await page.locator("img").count()).toBe(0);
  });

  it("counts a child's stderr lines in words that fit the count", async () => {
    // Listing its tools starts the echo fixture, which writes one line to stderr when it is ready (and one per call).
    await gaggle.meta("get_schema", { server_id: "echo" });
    await page.locator('tr[data-child="echo"] [data-state="running"]').waitFor({ timeout: 10_000 });
    await page.locator('tr[data-child="echo"] summary').waitFor({ timeout: 10_000 });
    expect(await page.locator('tr[data-child="echo"] summary').textContent()).toBe("1 line");
  });

  it("shows how long finished background work ran, and a failed call's error code as it is written", async () => {
    const run = await gaggle.meta("execute_child_tool", { server_id: "process", tool_name: "gg_process_run", arguments: { command: "sleep 1" } });
    const id = String((JSON.parse(textOf(run)) as { pid: number }).pid);
    const status = await until(
      () => json<Status>(gaggle.admin + "api/status"),
      (seen) => seen.background.some((work) => work.id === id && work.ended_at !== null),
    );
    const work = status.background.find((entry) => entry.id === id)!;
    const ranFor = Math.floor((Date.parse(work.ended_at!) - Date.parse(work.started_at!)) / 1000);
    // Read once the time since its start is two seconds past its run: the page must still show the run.
    await until(
      () => Date.now() - Date.parse(work.started_at!),
      (elapsed) => elapsed >= (ranFor + 2) * 1000,
    );
    const row = page.locator("#background tbody tr", { hasText: id });
    await row.locator('[data-state="completed"]').waitFor({ timeout: 10_000 });
    expect(await row.locator("td.ran").textContent()).toBe(`${ranFor}s`);

    await gaggle.meta("execute_child_tool", { server_id: "process", tool_name: "nowhere", arguments: {} });
    const failed = page.locator("#calls tbody tr", { hasText: "process.nowhere" }).first();
    await failed.waitFor({ timeout: 10_000 });
    expect(await failed.locator('[data-state="error"]').textContent()).toBe("TOOL_NOT_FOUND");
  });

  it("says the token it was opened with is not taken once an edit of the config removes it", async () => {
    const tokens = (names: string[]) =>
      `[gateway]\nauth_tokens = { ${names.map((name) => `${name} = "${name}-token-0123456789abcdef"`).join(", ")} }\n`;
    const served = await startHttpGaggle(`${tokens(["ann", "bob"])}${PROCESS_ONLY}`);
    const tab = await browser.newPage();
    try {
      await tab.goto(`${served.url.replace(/mcp$/, "")}#token=bob-token-0123456789abcdef`);
      await tab.locator("#live.on").waitFor({ timeout: 10_000 });
      writeFileSync(served.config, `${tokens(["ann"])}${PROCESS_ONLY}`);
      // The stream it followed ends first; the page's next request is the one refused.
      await tab.locator("#live.off", { hasText: "token" }).waitFor({ timeout: 10_000 });
      expect(await tab.locator("#live").textContent()).toMatch(/the token this page was opened with is not taken \(any more\)/);
    } finally {
      await tab.close();
      await served.stop();
    }
  });
});
