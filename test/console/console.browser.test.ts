import { mkdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import sparticuz from "@sparticuz/chromium";
import { chromium, type Browser, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addAccountAlias, createPartner } from "../../src/ingest/partners.ts";
import { setFourEyesAboveMinor } from "../../src/operators/operators.ts";
import { givenApiWorld, type ApiWorld } from "../support/api-scenario.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { givenOperator } from "../support/ops-client.ts";
import { fixture, ingest, type Scene } from "../ingest/support.ts";

const ARTIFACTS = fileURLToPath(new URL("../../test-artifacts/console/", import.meta.url));
const CORRECTED = fileURLToPath(new URL("../../fixtures/ach/corrected.ach", import.meta.url));

/** The quickstart's world: original.ach applied, payee two aliased to its account. */
async function givenQuickstart(db: TestDatabase, name: string): Promise<ApiWorld & { scene: Scene }> {
  const world = await givenApiWorld(db.pool, name);
  const partner = await createPartner(db.pool, world.tenantId, "fedach");
  if (!partner.ok) throw new Error(partner.error.message);
  await world.client.post("/v1/accounts", { id: "payee-two", kind: "customer", currency: "USD" });
  await addAccountAlias(db.pool, world.tenantId, "aba:021000021:1000002", "payee-two");
  const scene = { tenantId: world.tenantId, partner: partner.value };
  await ingest(db.pool, scene, fixture("ach/original.ach"), "original.ach");
  return { ...world, scene };
}

describe("the console in a real headless Chromium", () => {
  let db: TestDatabase;
  let browser: Browser;
  let world: ApiWorld & { scene: Scene };
  let strict: ApiWorld & { scene: Scene };
  const secrets: Record<string, string> = {};
  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    db = await createTestDatabase();
    world = await givenQuickstart(db, "console");
    strict = await givenQuickstart(db, "console-strict");
    await ingest(db.pool, strict.scene, fixture("ach/corrected.ach"), "corrected.ach");
    await setFourEyesAboveMinor(db.pool, strict.tenantId, 10_000n);
    secrets.ann = await givenOperator(db.pool, world.tenantId, "ann", "approver");
    secrets.vera = await givenOperator(db.pool, world.tenantId, "vera", "viewer");
    secrets.sam = await givenOperator(db.pool, strict.tenantId, "sam", "approver");
    browser = await chromium.launch({ executablePath: await sparticuz.executablePath(), args: sparticuz.args, headless: true });
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await world?.api.close();
    await strict?.api.close();
    await db?.drop();
  });

  async function signedIn(base: string, tenant: string, name: string): Promise<Page> {
    const page = await (await browser.newContext({ viewport: { width: 1366, height: 900 } })).newPage();
    await page.goto(`${base}/console`);
    await page.fill("input[name=tenant]", tenant);
    await page.fill("input[name=name]", name);
    await page.fill("input[name=secret]", secrets[name] ?? "");
    await Promise.all([page.waitForURL(`${base}/console/files`), page.click("#sign-in")]);
    return page;
  }

  it("signs in, previews the corrected file (1 new, 3 unchanged, 1 changed 200.00 -> 205.00 side by side), confirms, decides the conflict as a replacement, and the statement shows the compensation and the corrected posting once", async () => {
    const page = await signedIn(world.api.baseUrl, "console", "ann");
    expect(await page.locator("#files-per-day rect title").first().textContent()).toMatch(/done: 1$/);
    await page.screenshot({ path: `${ARTIFACTS}files.png`, fullPage: true });

    await page.setInputFiles("#file", CORRECTED);
    await page.click("#preview-button");
    await expect.poll(() => page.textContent("#summary")).toContain("1 new, 3 unchanged, 1 changed, 0 rejected");
    const changed = page.locator("#preview-records tr.changed");
    expect(await changed.count()).toBe(1);
    expect(await changed.locator(".old-amount").textContent()).toBe("200.00");
    expect(await changed.locator(".new-amount").textContent()).toBe("205.00");
    await page.screenshot({ path: `${ARTIFACTS}re-upload-preview.png`, fullPage: true });
    await page.click("#confirm");
    await expect.poll(() => page.textContent("#result")).toMatch(/^applied: file /);

    await page.goto(`${world.api.baseUrl}/console/reviews`);
    const row = page.locator("#reviews tr[data-review]").filter({ hasText: "open" });
    expect(await row.count()).toBe(1);
    await row.locator("select[name=decision]").selectOption("replace");
    await row.locator("input[name=reason]").fill("partner confirmed 205.00");
    await page.screenshot({ path: `${ARTIFACTS}review-queue.png`, fullPage: true });
    await Promise.all([page.waitForURL(/\/decision$/), row.locator("button").click()]);
    expect(await page.textContent("#outcome")).toMatch(/^replace by ann: .*:compensate, .*:replace:rev_/);

    await page.goto(`${world.api.baseUrl}/console/accounts/payee-two`);
    expect(await page.textContent("#balance")).toBe("205.00");
    const statement = page.locator("#statement tr");
    expect(await statement.filter({ hasText: "correction-compensation" }).count()).toBe(1);
    expect(await statement.filter({ hasText: "correction-replacement" }).count()).toBe(1);
    await page.screenshot({ path: `${ARTIFACTS}statement.png`, fullPage: true });
    await page.goto(`${world.api.baseUrl}/console/suspense`);
    await page.screenshot({ path: `${ARTIFACTS}suspense.png`, fullPage: true });
    const posting = page.locator("#suspense tr[data-posting]").first();
    const amount = (await posting.locator("td.num").textContent())?.split(" ")[0];
    await posting.locator("input[name=to_account]").fill("bob");
    await posting.locator("input[name=reason]").fill("alias for bob was missing");
    await Promise.all([page.waitForURL(/\/suspense\/moves$/), posting.locator("button").click()]);
    expect(await page.textContent("#outcome")).toMatch(/^moved to bob by ann: .*:suspense-move$/);
    expect((await world.client.get("/v1/accounts/bob/balance")).json).toMatchObject({ balance: amount });
    await page.goto(`${world.api.baseUrl}/console/accounts`);
    expect(Number(await page.textContent("#projection-lag"))).toBeGreaterThanOrEqual(0);
    expect(await page.locator("#accounts tr").filter({ hasText: "payee-two" }).textContent()).toContain("205.00");
    await page.screenshot({ path: `${ARTIFACTS}accounts.png`, fullPage: true });
  }, 120_000);

  it("gives a viewer no decision form, and refuses a viewer's decision posted by hand", async () => {
    const page = await signedIn(world.api.baseUrl, "console", "vera");
    await page.goto(`${world.api.baseUrl}/console/reviews`);
    expect(await page.locator("form.decide").count()).toBe(0);
    const csrf = await page.getAttribute("body", "data-csrf");
    const response = await page.request.post(`${world.api.baseUrl}/console/reviews/rev_any/decision`, { form: { csrf_token: csrf ?? "", idempotency_key: "viewer-1", decision: "refuse", reason: "viewer tries" } });
    expect(response.status()).toBe(403);
    await page.screenshot({ path: `${ARTIFACTS}viewer-reviews.png`, fullPage: true });
  }, 60_000);

  it("refuses a form without the session's CSRF token", async () => {
    const page = await signedIn(world.api.baseUrl, "console", "ann");
    const response = await page.request.post(`${world.api.baseUrl}/console/reviews/rev_any/decision`, { form: { idempotency_key: "no-csrf", decision: "refuse", reason: "forged" } });
    expect(response.status()).toBe(403);
  }, 60_000);

  it("lets an approver propose above the four-eyes amount but not approve their own proposal", async () => {
    const page = await signedIn(strict.api.baseUrl, "console-strict", "sam");
    await page.goto(`${strict.api.baseUrl}/console/reviews`);
    const row = page.locator("#reviews tr[data-review]").filter({ hasText: "open" });
    await row.locator("select[name=decision]").selectOption("replace");
    await row.locator("input[name=reason]").fill("partner confirmed 205.00");
    await Promise.all([page.waitForURL(/\/decision$/), row.locator("button").click()]);
    expect(await page.textContent("#outcome")).toMatch(/^proposed prop_\w+: waits for a second approver; nothing posted$/);
    await page.goto(`${strict.api.baseUrl}/console/reviews`);
    await page.screenshot({ path: `${ARTIFACTS}four-eyes-proposal.png`, fullPage: true });
    await Promise.all([page.waitForURL(/\/approval$/), page.locator("#proposals form.approve button").click()]);
    expect(await page.textContent("#outcome")).toMatch(/FOUR_EYES_SELF_APPROVAL: sam proposed prop_\w+ and cannot approve it/);
    await page.screenshot({ path: `${ARTIFACTS}four-eyes-self-approval-refused.png`, fullPage: true });
    expect((await strict.client.get("/v1/accounts/payee-two/balance")).json).toMatchObject({ balance: "200.00" });
  }, 60_000);
});
