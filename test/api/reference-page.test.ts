import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { referencePagePath } from "../../src/api/reference-page.ts";
import { startTestApi, type TestApi } from "../support/api-server.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";

/** The `src` and `href` attributes of an HTML page. */
const assetsOf = (html: string) => [...html.matchAll(/\b(?:src|href)="([^"]+)"/g)].map((match) => match[1] ?? "");

describe("the API reference page at /docs/api", () => {
  let db: TestDatabase;
  let api: TestApi;
  let pageUrl: string;
  let html: string;
  beforeAll(async () => {
    db = await createTestDatabase();
    api = await startTestApi(db.pool);
    pageUrl = `${api.baseUrl}${referencePagePath}`;
    const page = await fetch(pageUrl);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toMatch(/^text\/html/);
    html = await page.text();
  });
  afterAll(async () => {
    await api.close();
    await db.drop();
  });

  it("loads its renderer's scripts and styles from this server alone, each of them served", async () => {
    const assets = assetsOf(html);
    expect(assets.some((asset) => asset.endsWith("swagger-ui-bundle.js"))).toBe(true);
    for (const asset of assets) {
      const url = new URL(asset, pageUrl);
      expect(url.origin, asset).toBe(api.baseUrl);
      expect((await fetch(url)).status, asset).toBe(200);
    }
  });

  it("renders the document /openapi.json serves, and asks no online validator about it", async () => {
    const initializer = await (await fetch(`${pageUrl}/static/swagger-initializer.js`)).text();
    expect(initializer).toContain("url: resolveUrl('./json')");
    expect(initializer).toContain("validatorUrl: null");
    const rendered = await (await fetch(`${pageUrl}/json`)).json();
    const published = await (await fetch(`${api.baseUrl}/openapi.json`)).json();
    expect(rendered).toEqual(published);
  });
});
