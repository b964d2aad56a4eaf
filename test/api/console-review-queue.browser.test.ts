import { mkdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listReviews } from "../../src/records/index.ts";
import { setFourEyesAboveMinor } from "../../src/operators/operators.ts";
import type { ApiWorld } from "../support/api-scenario.ts";
import {
  browserWaitMs, givenDifferences, givenHeldConflict, launchBrowser, signIn, widthsOf,
} from "../support/console-browser.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { givenOperator } from "../support/ops-client.ts";
import { generateAchChunks } from "../../src/protocols/ach/generator.ts";
import { createPartner } from "../../src/partners/partners.ts";
import { givenApiWorld } from "../support/api-scenario.ts";
import { ingest, type Scene } from "../files/support.ts";

/**
 * A tenant whose two-entry file was followed by two files with the same traces and other amounts
 * (other seeds): each natural key holds two review items, one per changed version.
 */
async function givenTwoChangedVersions(db: TestDatabase): Promise<ApiWorld> {
  const world = await givenApiWorld(db.pool, "queue-groups");
  const partner = await createPartner(db.pool, world.tenantId, "fedach");
  if (!partner.ok) throw new Error(partner.error.message);
  const scene = { tenantId: world.tenantId, partner: partner.value };
  for (const seed of [1, 2, 3]) {
    const content = Buffer.concat([...generateAchChunks({ entries: 2, batches: 1, seed, firstTrace: 1 })]);
    await ingest(db.pool, scene, content, `payroll-${seed}.ach`);
  }
  return world;
}

const ARTIFACTS = fileURLToPath(new URL("../../test-artifacts/console/", import.meta.url));

describe("the console's review queue is safe by default (a real headless Chromium)", () => {
  let db: TestDatabase;
  let browser: Browser;
  let held: ApiWorld & { scene: Scene };
  let strict: ApiWorld & { scene: Scene };
  let recon: ApiWorld;
  let groups: ApiWorld;
  const secrets: Record<string, string> = {};
  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    db = await createTestDatabase();
    held = await givenHeldConflict(db, "queue-held");
    secrets.ada = await givenOperator(db.pool, held.tenantId, "ada", "approver");
    strict = await givenHeldConflict(db, "queue-strict");
    await setFourEyesAboveMinor(db.pool, strict.tenantId, 10_000n);
    secrets.pat = await givenOperator(db.pool, strict.tenantId, "pat", "approver");
    recon = await givenDifferences(db, "queue-recon", "9.00");
    secrets.rex = await givenOperator(db.pool, recon.tenantId, "rex", "approver");
    groups = await givenTwoChangedVersions(db);
    secrets.gus = await givenOperator(db.pool, groups.tenantId, "gus", "approver");
    browser = await launchBrowser();
  }, 300_000);
  afterAll(async () => {
    await browser?.close();
    await held?.api.close();
    await strict?.api.close();
    await recon?.api.close();
    await groups?.api.close();
    await db?.drop();
  });

  const asAda = (): Promise<Page> =>
    signIn(browser, held.api.baseUrl, { tenant: "queue-held", name: "ada", secret: secrets.ada ?? "" });
  const openReviews = async () =>
    (await listReviews(db.pool, { tenantId: held.tenantId, state: "open" })).length;

  it("preselects no decision, and the browser refuses to send the form until one is chosen", async () => {
    const page = await asAda();
    await page.goto(`${held.api.baseUrl}/console/reviews`);
    const item = page.locator("#reviews article[data-state=open]");
    expect(await item.locator("input[name=decision]").count()).toBe(3);
    expect(await item.locator("input[name=decision]:checked").count()).toBe(0);
    await item.locator("input[name=reason]").fill("partner confirmed 205.00");
    await item.locator("input[name=reason]").press("Enter");
    await item.locator("form.decide button").click();
    expect(page.url()).toBe(`${held.api.baseUrl}/console/reviews`);
    const checkValidity = (form: unknown) => (form as { checkValidity(): boolean }).checkValidity();
    expect(await item.locator("form.decide").evaluate(checkValidity)).toBe(false);
    const valueMissing = (input: unknown) =>
      (input as { validity: { valueMissing: boolean } }).validity.valueMissing;
    expect(await item.locator("input[name=decision]").first().evaluate(valueMissing)).toBe(true);
    expect(await openReviews()).toBe(1);
    await page.screenshot({ path: `${ARTIFACTS}review-refused-without-choice.png`, fullPage: true });
    // Seen here: after the browser's refusal (its validation bubble) the next sign-in of this
    // single-process Chromium stalls for 15 to 30 s, hence the 90 s wait bound of signIn. Closing
    // the context instead ends the whole browser, and leaving the page does not help.
  }, 180_000);

  it("answers a decision posted without a decision with 400 REVIEW_DECISION_MISSING, and decides nothing", async () => {
    const page = await asAda();
    await page.goto(`${held.api.baseUrl}/console/reviews`);
    const reviewId = await page.locator("#reviews article[data-state=open]").getAttribute("data-review");
    const csrf = (await page.getAttribute("body", "data-csrf")) ?? "";
    const response = await page.request.post(
      `${held.api.baseUrl}/console/reviews/${reviewId ?? ""}/decision`,
      {
        form: { csrf_token: csrf, idempotency_key: "no-decision-1", reason: "forgot to choose" },
        timeout: browserWaitMs,
      },
    );
    expect(response.status()).toBe(400);
    expect(await response.text()).toContain('data-code="review_decision_missing"');
    expect(await openReviews()).toBe(1);
  }, 180_000);

  it("shows the original and the held record side by side, the changed amount marked", async () => {
    const page = await asAda();
    await page.goto(`${held.api.baseUrl}/console/reviews`);
    const item = page.locator("#reviews article[data-state=open]");
    const differs = item.locator("table.side-by-side tr.differs");
    expect(await differs.evaluateAll((rows) => rows.map((r) => r.getAttribute("data-field"))))
      .toEqual(["amount"]);
    expect(await differs.locator("td.was mark").textContent()).toBe("200.00 USD");
    expect(await differs.locator("td.held mark").textContent()).toBe("205.00 USD");
    const arrived = item.locator("tr[data-field='arrived in']");
    expect(await arrived.locator("td.was").textContent()).toMatch(/^original\.ach, line \d+$/);
    expect(await arrived.locator("td.held").textContent()).toMatch(/^corrected\.ach, line \d+$/);
    expect(await item.locator(".age").textContent()).toMatch(/^\d+ (min|h \d+ min|d \d+ h)$/);
    await page.screenshot({ path: `${ARTIFACTS}review-side-by-side.png`, fullPage: true });
  }, 180_000);

  it("shows an item with a pending four-eyes proposal as waiting for its second approver, with no Decide form", async () => {
    const base = strict.api.baseUrl;
    const page = await signIn(browser, base, { tenant: "queue-strict", name: "pat", secret: secrets.pat ?? "" });
    await page.goto(`${base}/console/reviews`);
    const item = page.locator("#reviews article[data-review]");
    await item.locator("input[name=decision][value=replace]").check();
    await item.locator("input[name=reason]").fill("partner confirmed 205.00");
    await Promise.all([page.waitForURL(/\/decision$/), item.locator("form.decide button").click()]);
    expect(await page.textContent("#outcome")).toMatch(/^proposed prop_\w+: waits for a second approver/);
    await page.goto(`${base}/console/reviews`);
    expect(await item.getAttribute("data-state")).toBe("waiting");
    expect(await item.locator(".waiting").textContent()).toMatch(/^waiting for second\s+approver: replace proposed by pat/);
    expect(await item.locator("form.decide").count()).toBe(0);
    await page.screenshot({ path: `${ARTIFACTS}review-waiting-for-second-approver.png`, fullPage: true });
  }, 180_000);

  it("lists a file's records from the files list, and follows the conflict to its review", async () => {
    const page = await asAda();
    await Promise.all([
      page.waitForURL(/\/console\/files\/.+/),
      page.locator("#files a", { hasText: "corrected.ach" }).click(),
    ]);
    const records = page.locator("#file-records tr[data-record]");
    expect(await records.evaluateAll((rows) => rows.map((r) => r.getAttribute("data-outcome"))).then((o) => o.sort()))
      .toEqual(["applied", "conflict", "duplicate", "duplicate", "duplicate"]);
    const conflict = page.locator("#file-records tr[data-outcome=conflict]");
    expect(await conflict.locator("td[data-label=amount]").textContent()).toBe("205.00 USD");
    expect(await conflict.locator("a.original").textContent()).toBe("original.ach");
    await page.screenshot({ path: `${ARTIFACTS}file-page.png`, fullPage: true });
    await Promise.all([page.waitForURL(/\/console\/reviews\?/), conflict.locator("a.review").click()]);
    const item = page.locator("#reviews article[data-review]");
    expect(await item.count()).toBe(1);
    expect(await item.locator("tr.differs td.held").textContent()).toBe("205.00 USD");
  }, 180_000);

  it("pages a file's records by a cursor (each record once) and filters them by outcome", async () => {
    const page = await asAda();
    await page.locator("#files a", { hasText: "corrected.ach" }).click();
    await page.waitForURL(/\/console\/files\/.+/);
    const fileUrl = page.url();
    await page.goto(`${fileUrl}?limit=2`);
    const seen: string[] = [];
    for (;;) {
      const rows = page.locator("#file-records tr[data-record]");
      seen.push(...await rows.evaluateAll((all) => all.map((r) => r.getAttribute("data-record") ?? "")));
      if (await page.locator("#next-page").count() === 0) break;
      await Promise.all([page.waitForURL(/after=/), page.click("#next-page")]);
    }
    expect(seen).toEqual(["1", "2", "3", "4", "5"]);
    await page.goto(fileUrl);
    await page.selectOption("select[name=outcome]", "conflict");
    await Promise.all([page.waitForURL(/outcome=conflict/), page.click("form.filter button")]);
    expect(await page.locator("#file-records tr[data-record]").evaluateAll((rows) =>
      rows.map((r) => r.getAttribute("data-outcome")))).toEqual(["conflict"]);
  }, 180_000);

  it("preselects no correction of a reconciliation difference, and refuses a decision-less POST with 400 RECON_DIFFERENCE_DECISION_MISSING", async () => {
    const base = recon.api.baseUrl;
    const page = await signIn(browser, base, { tenant: "queue-recon", name: "rex", secret: secrets.rex ?? "" });
    await page.goto(`${base}/console/differences`);
    const row = page.locator("#differences tr[data-reason=theirs_only]");
    expect(await row.locator("input[name=verb]").count()).toBe(2);
    expect(await row.locator("input[name=verb]:checked").count()).toBe(0);
    const id = (await row.getAttribute("data-difference")) ?? "";
    const csrf = (await page.getAttribute("body", "data-csrf")) ?? "";
    const response = await page.request.post(`${base}/console/differences/${id}/decision`, {
      form: { csrf_token: csrf, idempotency_key: "no-verb-1", reason: "forgot to choose" },
      timeout: browserWaitMs,
    });
    expect(response.status()).toBe(400);
    expect(await response.text()).toContain('data-code="recon_difference_decision_missing"');
    await page.goto(`${base}/console/differences`);
    expect(await page.locator("#differences tr[data-difference]").count()).toBe(2);
  }, 180_000);

  it("fits the files list, a file page, the review queue, the differences and the pictures at 1,366 px and 390 px without scrolling sideways", async () => {
    const overflowing: string[] = [];
    for (const widthPx of [1_366, 390]) {
      const page = await signIn(browser, held.api.baseUrl, { tenant: "queue-held", name: "ada", secret: secrets.ada ?? "", widthPx });
      const fileHref = (await page.locator("#files a", { hasText: "corrected.ach" }).getAttribute("href")) ?? "";
      const reconPage = await signIn(browser, recon.api.baseUrl, { tenant: "queue-recon", name: "rex", secret: secrets.rex ?? "", widthPx });
      const shots: Array<[string, Page, string]> = [
        ["files", page, `${held.api.baseUrl}/console/files`],
        ["file-page", page, `${held.api.baseUrl}${fileHref}`],
        ["reviews", page, `${held.api.baseUrl}/console/reviews?state=all`],
        ["differences", reconPage, `${recon.api.baseUrl}/console/differences`],
        ["pictures", page, `${held.api.baseUrl}/console/pictures`],
      ];
      for (const [name, on, url] of shots) {
        await on.goto(url);
        const { scrollWidth, innerWidth } = await widthsOf(on);
        expect(innerWidth).toBe(widthPx);
        if (scrollWidth > innerWidth) overflowing.push(`${name} at ${widthPx}: ${scrollWidth} px`);
        await on.screenshot({ path: `${ARTIFACTS}${name}-${widthPx}.png`, fullPage: true });
      }
    }
    expect(overflowing).toEqual([]);
  }, 300_000);

  it("groups the several held arrivals of one natural key, each with its file and line", async () => {
    const base = groups.api.baseUrl;
    const page = await signIn(browser, base, { tenant: "queue-groups", name: "gus", secret: secrets.gus ?? "" });
    await page.goto(`${base}/console/reviews`);
    const sections = page.locator("#reviews section.key-group");
    expect(await sections.count()).toBe(2);
    for (const section of await sections.all()) {
      expect(await section.locator("h2 .note").textContent()).toMatch(/^2 arrivals\s+held$/);
      expect(await section.locator("article tr[data-field='arrived in'] td.held").allTextContents())
        .toEqual([expect.stringMatching(/^payroll-2\.ach, line \d+$/), expect.stringMatching(/^payroll-3\.ach, line \d+$/)]);
    }
    await page.screenshot({ path: `${ARTIFACTS}review-groups.png`, fullPage: true });
  }, 180_000);

  it("labels every input and select of the review queue, a file page and the differences", async () => {
    const page = await asAda();
    const fileHref = (await page.locator("#files a", { hasText: "corrected.ach" }).getAttribute("href")) ?? "";
    const reconPage = await signIn(browser, recon.api.baseUrl, { tenant: "queue-recon", name: "rex", secret: secrets.rex ?? "" });
    const unlabelled: string[] = [];
    const pages: Array<[Page, string]> = [
      [page, `${held.api.baseUrl}/console/reviews`], [page, `${held.api.baseUrl}${fileHref}`],
      [page, `${held.api.baseUrl}/console/files`], [reconPage, `${recon.api.baseUrl}/console/differences`],
    ];
    for (const [on, url] of pages) {
      await on.goto(url);
      const controls = on.locator("input:not([type=hidden]), select");
      expect(await controls.count()).toBeGreaterThan(0);
      const names = await controls.evaluateAll((all) => all
        .filter((c) => (c as unknown as { labels: { length: number } }).labels.length === 0)
        .map((c) => c.getAttribute("name") ?? c.id));
      unlabelled.push(...names.map((name) => `${url}: ${name}`));
    }
    expect(unlabelled).toEqual([]);
  }, 180_000);

  // Last: it decides the held world's item.
  it("decides an item from the keyboard: arrows choose the decision, Tab reaches the reason, Enter sends", async () => {
    const page = await asAda();
    await page.goto(`${held.api.baseUrl}/console/reviews`);
    const item = page.locator("#reviews article[data-state=open]");
    await item.locator("input[name=decision]").first().focus();
    await page.keyboard.press("Space");
    await page.keyboard.press("ArrowRight");
    await page.keyboard.press("ArrowRight");
    expect(await item.locator("input[name=decision]:checked").getAttribute("value")).toBe("refuse");
    await page.keyboard.press("Tab");
    await page.keyboard.type("sent twice by mistake");
    expect(await item.locator("input[name=reason]").inputValue()).toBe("sent twice by mistake");
    await Promise.all([page.waitForURL(/\/decision$/), page.keyboard.press("Enter")]);
    expect(await page.textContent("#outcome")).toMatch(/^refuse by ada: nothing posted$/);
    expect(await openReviews()).toBe(0);
  }, 180_000);
});
