// The status page in a real headless Chromium: it follows a child from starting to running and counts its call,
// live, with nothing loaded from anywhere but gaggle. A screenshot is kept in test-output/.
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type BrowserContext, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT, fixtureChild } from "../../helpers/paths.js";
import { NO_BUILT_INS } from "../../helpers/paths.js";
import { startAdminGaggle, type AdminGaggle } from "./helpers.js";

const CHROMIUM = "/usr/bin/chromium";
const OUTPUT = join(ROOT, "test-output");

describe("the status page in a browser", () => {
  let gaggle: AdminGaggle;
  let browser: BrowserContext;
  let page: Page;
  const profile = mkdtempSync(join(tmpdir(), "gaggle-chromium-"));
  /** Every URL the page asked for: nothing but gaggle's own. */
  const requested: string[] = [];

  beforeAll(async () => {
    // A child that takes 3 s to start, so the page has time to show it starting.
    gaggle = await startAdminGaggle(
      `${NO_BUILT_INS}\n${fixtureChild("slow", "slow.mjs", 'env = { SLOW_START_MS = "3000" }')}\n${fixtureChild("echo", "echo.mjs")}`,
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
});
