import sparticuz from "@sparticuz/chromium";
import { chromium, type Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { referencePagePath } from "../../src/api/reference-page.ts";
import { startTestApi, type TestApi } from "../support/api-server.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";

describe("the API reference page in a real headless Chromium", () => {
  let db: TestDatabase;
  let api: TestApi;
  let browser: Browser;
  beforeAll(async () => {
    db = await createTestDatabase();
    api = await startTestApi(db.pool);
    browser = await chromium.launch({ executablePath: await sparticuz.executablePath(), args: sparticuz.args, headless: true });
  });
  afterAll(async () => {
    await browser.close();
    await api.close();
    await db.drop();
  });

  it("renders every operation by its operationId, without a script error or a request to any other origin", async () => {
    const page = await browser.newPage();
    const elsewhere: string[] = [];
    const errors: string[] = [];
    page.on("pageerror", (error) => errors.push(error.message));
    page.on("request", (request) => {
      if (!request.url().startsWith(api.baseUrl) && !request.url().startsWith("data:")) elsewhere.push(request.url());
    });
    await page.goto(`${api.baseUrl}${referencePagePath}`);
    await page.locator(".opblock-tag").first().waitFor();
    const published = await (await fetch(`${api.baseUrl}/openapi.json`)).json() as {
      paths: Record<string, Record<string, { operationId: string }>>;
    };
    const operationIds = Object.values(published.paths).flatMap((item) => Object.values(item).map((op) => op.operationId));
    // Tags start collapsed (docExpansion none): open them all, then read the ids shown.
    for (const tag of await page.locator(".opblock-tag").all()) await tag.click();
    await page.locator(".opblock-summary-operation-id").nth(operationIds.length - 1).waitFor();
    const shown = await page.locator(".opblock-summary-operation-id").allTextContents();
    expect(shown.map((text) => text.trim()).sort()).toEqual([...operationIds].sort());
    expect(elsewhere).toEqual([]);
    expect(errors).toEqual([]);
    await page.close();
  });
});
