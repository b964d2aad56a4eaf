import sparticuz from "@sparticuz/chromium";
import { chromium, type Browser, type Page } from "playwright-core";
import { addAccountAlias, createPartner } from "../../src/partners/partners.ts";
import { importExternalFile } from "../../src/recon/external-items.ts";
import { runReconciliation } from "../../src/recon/runs.ts";
import { fund, givenApiWorld, type ApiWorld } from "./api-scenario.ts";
import type { TestDatabase } from "./database.ts";
import { fixture, ingest, type Scene } from "../files/support.ts";

/** The quickstart's world: original.ach applied, payee two aliased to its account. */
export async function givenQuickstart(
  db: TestDatabase, name: string,
): Promise<ApiWorld & { scene: Scene }> {
  const world = await givenApiWorld(db.pool, name);
  const partner = await createPartner(db.pool, world.tenantId, "fedach");
  if (!partner.ok) throw new Error(partner.error.message);
  await world.client.post("/v1/accounts", { id: "payee-two", kind: "customer", currency: "USD" });
  await addAccountAlias(db.pool, world.tenantId, "aba:021000021:1000002", "payee-two");
  const scene = { tenantId: world.tenantId, partner: partner.value };
  await ingest(db.pool, scene, fixture("ach/original.ach"), "original.ach");
  return { ...world, scene };
}

/** The quickstart with corrected.ach ingested too: record 2 held as a conflict (200.00 -> 205.00). */
export async function givenHeldConflict(
  db: TestDatabase, name: string,
): Promise<ApiWorld & { scene: Scene }> {
  const world = await givenQuickstart(db, name);
  await ingest(db.pool, world.scene, fixture("ach/corrected.ach"), "corrected.ach");
  return world;
}

/** A tenant whose settlement day has one unknown bank credit of `unknownAmount` (theirs_only) and one funding the bank did not show (ours_only). */
export async function givenDifferences(db: TestDatabase, tenantName: string, unknownAmount: string): Promise<ApiWorld> {
  const world = await givenApiWorld(db.pool, tenantName);
  const today = new Date().toISOString().slice(0, 10);
  await fund(world.client, "alice", "50.00");
  const csv = `id,date,amount,currency,reference,description\nc1,${today},${unknownAmount},USD,NOPE,unknown wire\n`;
  const imported = await importExternalFile(db.pool, { tenantId: world.tenantId, accountId: "settlement", name: "bank.csv", content: Buffer.from(csv), format: "csv" });
  if (!imported.ok) throw new Error(imported.error.map((f) => f.message).join("; "));
  const run = await runReconciliation(db.pool, { tenantId: world.tenantId, accountId: "settlement", from: today, to: today });
  if (!run.ok) throw new Error(run.error.message);
  return world;
}

/** The Chromium every console browser test drives (headless, no network of its own). */
export function launchBrowser(): Promise<Browser> {
  return sparticuz.executablePath().then((executablePath) =>
    chromium.launch({ executablePath, args: sparticuz.args, headless: true }));
}

/** How long a browser step may wait for the server (a bound, not a measurement). */
export const browserWaitMs = 90_000;

/** A page signed in as `name`, on the files page, at the given viewport width. */
export async function signIn(
  browser: Browser, base: string,
  operator: { tenant: string; name: string; secret: string; widthPx?: number },
): Promise<Page> {
  const viewport = { width: operator.widthPx ?? 1366, height: 900 };
  const context = await browser.newContext({ viewport });
  // Waits, not assertions: a machine shared with other work can take longer than Playwright's
  // 30 s default to serve a page.
  context.setDefaultTimeout(browserWaitMs);
  const page = await context.newPage();
  await page.goto(`${base}/console`);
  await page.fill("input[name=tenant]", operator.tenant);
  await page.fill("input[name=name]", operator.name);
  await page.fill("input[name=secret]", operator.secret);
  await Promise.all([page.waitForURL(`${base}/console/files`), page.click("#sign-in")]);
  return page;
}

/**
 * The page's widths: `document.documentElement.scrollWidth` and `innerWidth` (the page fits when
 * the first is at most the second). Passed as text: the test's TypeScript has no DOM types.
 */
export function widthsOf(page: Page): Promise<{ scrollWidth: number; innerWidth: number }> {
  return page.evaluate(
    "({ scrollWidth: document.documentElement.scrollWidth, innerWidth: window.innerWidth })",
  );
}
