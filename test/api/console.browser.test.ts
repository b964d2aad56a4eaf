import { mkdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import sparticuz from "@sparticuz/chromium";
import { chromium, type Browser, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openIncident } from "../../src/incidents/perimeter.ts";
import { enqueueOutbox, leaseDue, markFailed } from "../../src/outbox/outbox-store.ts";
import { setFourEyesAboveMinor } from "../../src/operators/operators.ts";
import type { ApiWorld } from "../support/api-scenario.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { givenOperator } from "../support/ops-client.ts";
import { fixture, ingest, type Scene } from "../files/support.ts";
import { givenDifferences, givenQuickstart } from "../support/console-browser.ts";

const ARTIFACTS = fileURLToPath(new URL("../../test-artifacts/console/", import.meta.url));
const CORRECTED = fileURLToPath(new URL("../../fixtures/ach/corrected.ach", import.meta.url));

/** givenDifferences with a 9.00 unknown credit, one dead letter and one incident. */
async function givenRecoveryWork(db: TestDatabase): Promise<ApiWorld> {
  const world = await givenDifferences(db, "console-recovery", "9.00");
  await enqueueOutbox(db.pool, { tenantId: world.tenantId, destination: "webhook:test", messageType: "payment.applied", messageKey: "console-dead-1", payload: {} });
  const leased = (await leaseDue(db.pool, "console-test", 100, 60_000)).find((m) => m.tenantId === world.tenantId);
  if (!leased) throw new Error("nothing leased");
  await markFailed(db.pool, leased, "HTTP 500 from the receiver", { dead: true });
  const incident = await openIncident(db.pool, world.tenantId, "fundings to check", { since: new Date(Date.now() - 3_600_000).toISOString(), until: new Date(Date.now() + 3_600_000).toISOString(), channel: "http" }, "ann");
  if (!incident.ok) throw new Error(incident.error.message);
  return world;
}

describe("the console in a real headless Chromium", () => {
  let db: TestDatabase;
  let browser: Browser;
  let world: ApiWorld & { scene: Scene };
  let strict: ApiWorld & { scene: Scene };
  let recovery: ApiWorld;
  let fourEyesRecon: ApiWorld;
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
    recovery = await givenRecoveryWork(db);
    secrets.rita = await givenOperator(db.pool, recovery.tenantId, "rita", "approver");
    secrets.val = await givenOperator(db.pool, recovery.tenantId, "val", "viewer");
    fourEyesRecon = await givenDifferences(db, "console-recon-strict", "250.00");
    await setFourEyesAboveMinor(db.pool, fourEyesRecon.tenantId, 10_000n);
    secrets.rosa = await givenOperator(db.pool, fourEyesRecon.tenantId, "rosa", "approver");
    secrets.theo = await givenOperator(db.pool, fourEyesRecon.tenantId, "theo", "approver");
    browser = await chromium.launch({ executablePath: await sparticuz.executablePath(), args: sparticuz.args, headless: true });
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await world?.api.close();
    await strict?.api.close();
    await recovery?.api.close();
    await fourEyesRecon?.api.close();
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
    await expect.poll(() => page.textContent("#summary")).toContain("1 new, 3 unchanged, 1 changed, 0 suspect, 0 rejected");
    const changed = page.locator("#preview-records tr.changed");
    expect(await changed.count()).toBe(1);
    expect(await changed.locator(".old-amount").textContent()).toBe("200.00");
    expect(await changed.locator(".new-amount").textContent()).toBe("205.00");
    await page.screenshot({ path: `${ARTIFACTS}re-upload-preview.png`, fullPage: true });
    await page.click("#confirm");
    await expect.poll(() => page.textContent("#result")).toMatch(/^applied: file /);

    await page.goto(`${world.api.baseUrl}/console/reviews`);
    const row = page.locator("#reviews article[data-state=open]");
    expect(await row.count()).toBe(1);
    await row.locator("input[name=decision][value=replace]").check();
    await row.locator("input[name=reason]").fill("partner confirmed 205.00");
    await page.screenshot({ path: `${ARTIFACTS}review-queue.png`, fullPage: true });
    await Promise.all([page.waitForURL(/\/decision$/), row.locator("form.decide button").click()]);
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
    await Promise.all([page.waitForURL(/\/suspense\/moves$/), posting.locator("form.move button").click()]);
    expect(await page.textContent("#outcome")).toMatch(/^moved to bob by ann: .*:suspense-move$/);
    expect((await world.client.get("/v1/accounts/bob/balance")).json).toMatchObject({ balance: amount });
    await page.goto(`${world.api.baseUrl}/console/accounts`);
    expect(Number(await page.textContent("#projection-lag"))).toBeGreaterThanOrEqual(0);
    expect(await page.locator("#accounts tr").filter({ hasText: "payee-two" }).textContent()).toContain("205.00");
    await page.screenshot({ path: `${ARTIFACTS}accounts.png`, fullPage: true });
  }, 120_000);

  it("looks the replaced record up: its history shows both files' arrivals, the held item, the decision and its three transfers", async () => {
    const page = await signedIn(world.api.baseUrl, "console", "ann");
    await page.goto(`${world.api.baseUrl}/console/records`);
    await page.fill("input[name=key]", "ach:23138010:231380100000002:1234567890:PPD:250305");
    await Promise.all([page.waitForURL(/\/console\/records\?key=/), page.click("#look-up")]);
    const arrivals = page.locator("#events tr.arrival");
    expect(await arrivals.evaluateAll((rows) => rows.map((row) => row.getAttribute("data-outcome")))).toEqual(["applied", "conflict"]);
    expect(await page.locator("#events tr.decision").textContent()).toContain("replace by ann");
    expect(await page.locator("#transfers tr[data-transfer]").count()).toBe(3);
    await page.screenshot({ path: `${ARTIFACTS}record-history.png`, fullPage: true });
  }, 60_000);

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
    const row = page.locator("#reviews article[data-state=open]");
    await row.locator("input[name=decision][value=replace]").check();
    await row.locator("input[name=reason]").fill("partner confirmed 205.00");
    await Promise.all([page.waitForURL(/\/decision$/), row.locator("form.decide button").click()]);
    expect(await page.textContent("#outcome")).toMatch(/^proposed prop_\w+: waits for a second approver; nothing posted$/);
    await page.goto(`${strict.api.baseUrl}/console/reviews`);
    await page.screenshot({ path: `${ARTIFACTS}four-eyes-proposal.png`, fullPage: true });
    await Promise.all([page.waitForURL(/\/approval$/), page.locator("#proposals form.approve button").click()]);
    expect(await page.textContent("#outcome")).toMatch(/FOUR_EYES_SELF_APPROVAL: sam proposed prop_\w+ and cannot approve it/);
    await page.screenshot({ path: `${ARTIFACTS}four-eyes-self-approval-refused.png`, fullPage: true });
    expect((await strict.client.get("/v1/accounts/payee-two/balance")).json).toMatchObject({ balance: "200.00" });
  }, 60_000);
  it("lists reconciliation differences theirs_only first and corrects one, recording the operator", async () => {
    const page = await signedIn(recovery.api.baseUrl, "console-recovery", "rita");
    await page.goto(`${recovery.api.baseUrl}/console/differences`);
    expect(await page.locator("#differences tr[data-difference]").evaluateAll((rows) => rows.map((r) => r.getAttribute("data-reason")))).toEqual(["theirs_only", "ours_only"]);
    expect(await page.textContent("#by-reason")).toBe("theirs_only 1, ours_only 1");
    await page.screenshot({ path: `${ARTIFACTS}differences.png`, fullPage: true });
    const row = page.locator("#differences tr[data-reason=theirs_only]");
    expect(await row.locator("td.num").textContent()).toBe("9.00 USD");
    await row.locator("input[name=verb][value=correct]").check();
    await row.locator("input[name=reason]").fill("bank fee refund without advice");
    await Promise.all([page.waitForURL(/\/decision$/), row.locator("form.decide button").click()]);
    expect(await page.textContent("#outcome")).toMatch(/^corrected by rita: recon:\S+$/);
    await page.goto(`${recovery.api.baseUrl}/console/differences`);
    expect(await page.locator("#differences tr[data-difference]").count()).toBe(1);
  }, 60_000);

  it("gives a viewer no difference or retry form, and refuses them posted by hand", async () => {
    const page = await signedIn(recovery.api.baseUrl, "console-recovery", "val");
    await page.goto(`${recovery.api.baseUrl}/console/differences`);
    expect(await page.locator("form.decide").count()).toBe(0);
    await page.goto(`${recovery.api.baseUrl}/console/outbox`);
    expect(await page.locator("form.retry").count()).toBe(0);
    const csrf = (await page.getAttribute("body", "data-csrf")) ?? "";
    const decided = await page.request.post(`${recovery.api.baseUrl}/console/differences/rdf_any/decision`, { form: { csrf_token: csrf, idempotency_key: "viewer-diff", verb: "explain", reason: "viewer tries" } });
    expect(decided.status()).toBe(403);
    const retried = await page.request.post(`${recovery.api.baseUrl}/console/outbox/1/retry`, { form: { csrf_token: csrf, idempotency_key: "viewer-retry" } });
    expect(retried.status()).toBe(403);
  }, 60_000);

  it("lists outbox dead letters with the outbox lag, and retries one", async () => {
    const page = await signedIn(recovery.api.baseUrl, "console-recovery", "rita");
    await page.goto(`${recovery.api.baseUrl}/console/outbox`);
    expect(Number(await page.textContent("#outbox-lag"))).toBeGreaterThanOrEqual(0);
    const row = page.locator("#dead-letters tr[data-outbox]");
    expect(await row.textContent()).toContain("HTTP 500 from the receiver");
    await page.screenshot({ path: `${ARTIFACTS}outbox-dead-letters.png`, fullPage: true });
    await Promise.all([page.waitForURL(/\/retry$/), row.locator("form.retry button").click()]);
    expect(await page.textContent("#outcome")).toMatch(/^message \d+ is due again \(retried by rita\)$/);
    await page.goto(`${recovery.api.baseUrl}/console/outbox`);
    expect(await page.locator("#dead-letters tr[data-outbox]").count()).toBe(0);
    await page.goto(`${recovery.api.baseUrl}/console/accounts`);
    expect(await page.locator("#projection-lag-chart").count()).toBe(1);
    expect(await page.locator("#outbox-lag-chart").count()).toBe(1);
    await page.screenshot({ path: `${ARTIFACTS}accounts-lag-charts.png`, fullPage: true });
  }, 60_000);

  it("lists incidents and shows one with its perimeter", async () => {
    const page = await signedIn(recovery.api.baseUrl, "console-recovery", "rita");
    await page.goto(`${recovery.api.baseUrl}/console/incidents`);
    await page.screenshot({ path: `${ARTIFACTS}incidents.png`, fullPage: true });
    await Promise.all([page.waitForURL(/\/console\/incidents\/.+/), page.locator("#incidents a", { hasText: "fundings to check" }).click()]);
    const records = page.locator("#incident-records tr").filter({ hasText: "http" });
    expect(await records.count()).toBe(1);
    expect(await records.locator("td.num").textContent()).toBe("50.00 USD");
    await page.screenshot({ path: `${ARTIFACTS}incident.png`, fullPage: true });
  }, 60_000);

  it("proposes a reconciliation correction above the four-eyes amount, refuses the proposer's approval, and posts it once when a second approver approves", async () => {
    const base = fourEyesRecon.api.baseUrl;
    const rosa = await signedIn(base, "console-recon-strict", "rosa");
    await rosa.goto(`${base}/console/differences`);
    const row = rosa.locator("#differences tr[data-reason=theirs_only]");
    expect(await row.locator("td.num").textContent()).toBe("250.00 USD");
    await row.locator("input[name=verb][value=correct]").check();
    await row.locator("input[name=reason]").fill("large unknown credit");
    await Promise.all([rosa.waitForURL(/\/decision$/), row.locator("form.decide button").click()]);
    expect(await rosa.textContent("#outcome")).toMatch(/^proposed prop_\w+: the correction waits for a second approver; nothing posted$/);
    await rosa.goto(`${base}/console/differences`);
    expect(await row.locator(".proposal").textContent()).toMatch(/^correction proposed by rosa \(console\): large unknown credit; waits for a second approver$/);
    await rosa.screenshot({ path: `${ARTIFACTS}recon-correction-proposed.png`, fullPage: true });
    await Promise.all([rosa.waitForURL(/\/approval$/), row.locator("form.approve button").click()]);
    expect(await rosa.textContent("#outcome")).toMatch(/FOUR_EYES_SELF_APPROVAL: rosa proposed prop_\w+ and cannot approve it/);
    await rosa.screenshot({ path: `${ARTIFACTS}recon-correction-self-approval-refused.png`, fullPage: true });
    const corrections = async () => (await db.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM transfer WHERE tenant_id = $1 AND kind = 'recon_correction'", [fourEyesRecon.tenantId])).rows[0]?.n;
    expect(await corrections()).toBe(0);

    const theo = await signedIn(base, "console-recon-strict", "theo");
    await theo.goto(`${base}/console/differences`);
    const pending = theo.locator("#differences tr[data-reason=theirs_only]");
    await theo.screenshot({ path: `${ARTIFACTS}recon-correction-approval.png`, fullPage: true });
    await Promise.all([theo.waitForURL(/\/approval$/), pending.locator("form.approve button").click()]);
    expect(await theo.textContent("#outcome")).toMatch(/^approved prop_\w+ by theo: corrected, recon:\S+$/);
    await theo.screenshot({ path: `${ARTIFACTS}recon-correction-approved.png`, fullPage: true });
    expect(await corrections()).toBe(1);
    await theo.goto(`${base}/console/differences`);
    expect(await theo.locator("#differences tr[data-difference]").evaluateAll((rows) => rows.map((r) => r.getAttribute("data-reason")))).toEqual(["ours_only"]);
    await theo.goto(`${base}/console/reviews`);
    expect(await theo.locator("#proposals tr[data-proposal]").textContent()).toContain("approved by theo");
  }, 90_000);
});
