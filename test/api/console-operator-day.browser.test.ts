import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { Writable } from "node:stream";
import type { Browser, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../../src/observability/logger.ts";
import { setFourEyesAboveMinor } from "../../src/operators/operators.ts";
import { startRelay, defaultRelaySettings, type Relay } from "../../src/outbox/relay.ts";
import { WebhookSecretKeys } from "../../src/outbox/webhooks/secret-box.ts";
import { verifyWebhook } from "../../src/outbox/webhooks/signature.ts";
import { webhookDeliverer } from "../../src/outbox/webhooks/webhook-deliverer.ts";
import { fund, type ApiWorld } from "../support/api-scenario.ts";
import {
  browserWaitMs, givenQuickstart, launchBrowser, signIn,
} from "../support/console-browser.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { givenOperator } from "../support/ops-client.ts";
import type { Scene } from "../files/support.ts";

// The key the console seals webhook signing secrets with, and the relay below opens them with:
// read from the configuration, never from a key file in the working directory.
const WEBHOOK_KEY_HEX = "5a".repeat(32);
process.env.CLEARLINE_WEBHOOK_SECRET_KEY = WEBHOOK_KEY_HEX;

/** Screenshots go to a temporary folder, never into the repository. */
const SHOTS = mkdtempSync(path.join(tmpdir(), "clearline-operator-day-"));

interface Received { id: string; timestamp: number; body: string; signature: string }

/** A webhook receiver: answers 204 and hands over each delivery as it arrives. */
function startReceiver(): Promise<{ server: Server; url: string; next: () => Promise<Received> }> {
  const waiting: Array<(r: Received) => void> = [];
  const arrived: Received[] = [];
  const server = createServer((request: IncomingMessage, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const received = {
        id: String(request.headers["webhook-id"]), body: Buffer.concat(chunks).toString("utf8"),
        timestamp: Number(request.headers["webhook-timestamp"]),
        signature: String(request.headers["webhook-signature"]),
      };
      const waiter = waiting.shift();
      if (waiter) waiter(received); else arrived.push(received);
      response.writeHead(204).end();
    });
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => {
    const { port } = server.address() as AddressInfo;
    resolve({
      server, url: `http://127.0.0.1:${port}/hooks/clearline`,
      next: () => {
        const first = arrived.shift();
        return first ? Promise.resolve(first) : new Promise((r) => waiting.push(r));
      },
    });
  }));
}

/** The page fits: document.scrollingElement.scrollWidth <= clientWidth (no sideways scrolling). */
function widths(page: Page): Promise<{ scrollWidth: number; clientWidth: number }> {
  return page.evaluate("({ scrollWidth: document.scrollingElement.scrollWidth, clientWidth: document.scrollingElement.clientWidth })");
}

/** Screenshots at 1,366 px (asserting no horizontal overflow) and at a phone's 390 px. */
async function shoot(page: Page, name: string): Promise<void> {
  await page.setViewportSize({ width: 1_366, height: 900 });
  const wide = await widths(page);
  expect(wide.scrollWidth, `${name} at 1,366 px`).toBeLessThanOrEqual(wide.clientWidth);
  await page.screenshot({ path: path.join(SHOTS, `${name}-1366.png`), fullPage: true });
  await page.setViewportSize({ width: 390, height: 844 });
  await page.screenshot({ path: path.join(SHOTS, `${name}-390.png`), fullPage: true });
  await page.setViewportSize({ width: 1_366, height: 900 });
}

describe("an operator's day in the console (a real headless Chromium)", () => {
  let db: TestDatabase;
  let browser: Browser;
  let world: ApiWorld & { scene: Scene };
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let relay: Relay;
  const secrets: Record<string, string> = {};
  const today = new Date().toISOString().slice(0, 10);
  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    db = await createTestDatabase();
    world = await givenQuickstart(db, "day");
    await fund(world.client, "alice", "50.00");
    // Four eyes on: money decisions above 1,000,000.00 and every access grant need a second person.
    await setFourEyesAboveMinor(db.pool, world.tenantId, 100_000_000n);
    secrets.ann = await givenOperator(db.pool, world.tenantId, "ann", "approver");
    secrets.ada = await givenOperator(db.pool, world.tenantId, "ada", "admin");
    secrets.abe = await givenOperator(db.pool, world.tenantId, "abe", "admin");
    secrets.vic = await givenOperator(db.pool, world.tenantId, "vic", "viewer");
    receiver = await startReceiver();
    const keys = new WebhookSecretKeys(Buffer.from(WEBHOOK_KEY_HEX, "hex"));
    const logger = createLogger({ level: "warn", destination: new Writable({ write: (_c, _e, done) => done() }) });
    relay = startRelay(db.pool, [webhookDeliverer(db.pool, { keys })], logger,
      { ...defaultRelaySettings, idlePollMs: 50 });
    browser = await launchBrowser();
  }, 300_000);
  afterAll(async () => {
    await browser?.close();
    await relay?.stop();
    receiver?.server.close();
    await world?.api.close();
    await db?.drop();
  });

  // Each test's sessions end with it (cookies cleared). This Chromium (one process) can let a
  // script's fetch() carry an earlier context's session cookie for the same host, and the upload
  // is then refused for the other session's CSRF token (seen here, not in one browser profile,
  // which has one cookie jar): the statement upload runs first, in the file's first session.
  const open: Page[] = [];
  afterEach(async () => {
    for (const page of open.splice(0)) await page.context().clearCookies();
  });
  const as = async (name: string): Promise<Page> => {
    const page = await signIn(browser, world.api.baseUrl,
      { tenant: "day", name, secret: secrets[name] ?? "" });
    open.push(page);
    return page;
  };
  const go = (page: Page, to: string) => page.goto(`${world.api.baseUrl}${to}`);

  it("imports a bank statement, runs a reconciliation, shows both sides' lines, and explains a difference", async () => {
    const page = await as("ann");
    const statement = path.join(SHOTS, "bank.csv");
    writeFileSync(statement, `id,date,amount,currency,reference,description\nb1,${today},9.00,USD,WIRE-778,unknown wire from ACME\n`);
    await go(page, "/console/reconciliation");
    await page.getByLabel("Settlement account").first().selectOption("settlement");
    await page.setInputFiles("#statement", statement);
    await page.getByLabel("Format").selectOption("csv");
    await page.click("#import-button");
    await expect.poll(() => page.textContent("#import-result"), { timeout: browserWaitMs }).toBe("bank.csv: imported (csv) 1 items, 0 seen before, 0 listed twice");
    await shoot(page, "reconciliation");
    await page.locator("#run-form select[name=account]").selectOption("settlement");
    await Promise.all([page.waitForURL(/\/reconciliation\/runs$/), page.click("#run-button")]);
    expect(await page.textContent("#outcome")).toMatch(/^run \S+: 0 matched; 1 theirs_only, 1 ours_only$/);
    await go(page, "/console/differences");
    const theirs = page.locator("#differences tr[data-reason=theirs_only]");
    const line = theirs.locator('.bank-line[data-item="csv:b1"]');
    expect(await line.locator(".booking-date").textContent()).toBe(today);
    expect(await line.locator(".refs").textContent()).toContain("WIRE-778");
    expect(await line.locator(".text").textContent()).toBe("unknown wire from ACME");
    const ours = page.locator("#differences tr[data-reason=ours_only] .our-line");
    expect(await ours.textContent()).toMatch(new RegExp(`^api:fund-\\S+:\\s+\\S+, value ${today}, (debit|credit) 50\\.00 USD$`));
    await shoot(page, "differences-both-sides");
    await theirs.locator("input[name=verb][value=explain]").check();
    await theirs.getByLabel("Reason").fill("ACME prepayment, booked tomorrow");
    await Promise.all([page.waitForURL(/\/decision$/), theirs.locator("form.decide button").click()]);
    expect(await page.textContent("#outcome")).toMatch(/^explained by ann: no money moved$/);
  }, 120_000);

  it("pauses a partner's source saying why, shows who paused it, and resumes it", async () => {
    const page = await as("ann");
    await go(page, "/console/sources");
    const fedach = page.locator("#sources tr[data-source^='partner:']");
    expect(await fedach.getAttribute("data-state")).toBe("taking");
    await fedach.getByLabel("Why pause partner fedach").fill("partner reported a bad batch");
    await Promise.all([page.waitForURL(/\/sources\/pause$/), fedach.locator("form.pause button").click()]);
    expect(await page.textContent("#outcome")).toMatch(/^partner:\S+ paused by ann at \S+: partner reported a bad batch$/);
    await go(page, "/console/sources");
    expect(await fedach.getAttribute("data-state")).toBe("paused");
    expect(await fedach.textContent()).toMatch(/paused by ann at .*: partner reported a bad batch/);
    await shoot(page, "sources-paused");
    await Promise.all([page.waitForURL(/\/sources\/resume$/), fedach.locator("form.resume button").click()]);
    expect(await page.textContent("#outcome")).toMatch(/^partner:\S+ resumed by ann$/);
    await go(page, "/console/sources");
    expect(await fedach.getAttribute("data-state")).toBe("taking");
  }, 120_000);

  it("creates the alias a suspense line named and the line moves to its account; the statement shows a running balance", async () => {
    const page = await as("ann");
    await go(page, "/console/suspense");
    await shoot(page, "suspense");
    const line = page.locator("#suspense tr[data-posting]:not(.moved)").first();
    const postingKey = await line.getAttribute("data-posting");
    const alias = await line.getByLabel("Alias").inputValue();
    expect(alias).toMatch(/^aba:\d+:\d+$/);
    await line.getByLabel("Its account").fill("bob");
    await line.locator("input[name=alias_reason]").fill("bob's account at the bank");
    await Promise.all([page.waitForURL(/\/suspense\/aliases$/), line.locator("form.alias button").click()]);
    expect(await page.textContent("#outcome")).toBe(
      `alias ${alias} -> bob created; moved to bob by ann: ${postingKey}:suspense-move`);
    await go(page, "/console/suspense");
    const moved = page.locator(`#suspense tr[data-posting="${postingKey}"]`);
    expect(await moved.getAttribute("data-moved-to")).toBe("bob");
    expect(await moved.locator("form").count()).toBe(0);

    await go(page, "/console/accounts/bob");
    const balances = await page.locator("#statement td.running-balance").allTextContents();
    expect(balances.at(-1)).toBe(await page.textContent("#balance"));
    await shoot(page, "statement-bob");
    await go(page, "/console/accounts/settlement");
    await shoot(page, "statement-settlement");
  }, 120_000);

  it("adds a webhook endpoint with a second admin's approval and sends it a signed test event", async () => {
    const ada = await as("ada");
    await go(ada, "/console/webhooks");
    await ada.getByLabel("URL").fill(receiver.url);
    await ada.getByLabel(/^Event types/).fill("payment.applied,record.conflict");
    await ada.locator("#add-webhook").getByLabel("Reason").fill("ops dashboard feed");
    await Promise.all([ada.waitForURL(/\/console\/webhooks$/), ada.locator("#add-webhook button").click()]);
    expect(await ada.textContent("#outcome")).toMatch(/^proposed prop_\w+: the endpoint waits for a second admin$/);
    await go(ada, "/console/webhooks");
    expect(await ada.locator("#webhooks tr[data-endpoint]").count()).toBe(0);
    await Promise.all([ada.waitForURL(/\/approval$/), ada.locator("#webhook-proposals form.approve button").click()]);
    expect(await ada.textContent("#outcome")).toMatch(/FOUR_EYES_SELF_APPROVAL: ada proposed prop_\w+ and cannot approve it/);

    const abe = await as("abe");
    await go(abe, "/console/webhooks");
    await shoot(abe, "webhooks-proposed");
    await Promise.all([abe.waitForURL(/\/approval$/), abe.locator("#webhook-proposals form.approve button").click()]);
    expect(await abe.textContent("#outcome")).toMatch(/^approved prop_\w+ by abe: webhook endpoint ep_\w+ added for http:/);
    const signingSecret = (await abe.textContent("#secret")) ?? "";
    expect(signingSecret).toMatch(/^whsec_/);

    await go(ada, "/console/webhooks");
    const endpoint = ada.locator("#webhooks tr[data-endpoint]");
    expect(await endpoint.getAttribute("data-status")).toBe("active");
    await shoot(ada, "webhooks");
    await Promise.all([ada.waitForURL(/\/test$/), endpoint.locator("form.test button").click()]);
    expect(await ada.textContent("#outcome")).toMatch(/^test event test:\S+ queued for ep_\w+ by ada$/);
    const delivered = await receiver.next();
    expect(delivered.id).toMatch(/^test:/);
    expect(JSON.parse(delivered.body)).toMatchObject({ type: "webhook.test", data: { sent_by: "ada", test: true } });
    expect(verifyWebhook(signingSecret, delivered.id, delivered.timestamp, delivered.body, delivered.signature)).toBe(true);
  }, 120_000);

  it("disables an operator at once: the operator can no longer sign in, and the record shows who and why", async () => {
    const ada = await as("ada");
    await go(ada, "/console/operators");
    await shoot(ada, "operators");
    const vic = ada.locator("#operators tr[data-operator=vic]");
    await vic.getByLabel("Why disable vic").fill("left the team");
    await Promise.all([ada.waitForURL(/\/disable$/), vic.locator("form.disable button").click()]);
    expect(await ada.textContent("#outcome")).toMatch(/^vic disabled by ada: left the team \(\d+ sessions ended\)$/);
    await go(ada, "/console/operators");
    expect(await vic.locator(".state").textContent()).toMatch(/^disabled by ada at \S+: left the team$/);
    const signIn = await fetch(`${world.api.baseUrl}/console/sign-in`, {
      method: "POST", redirect: "manual", headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ tenant: "day", name: "vic", secret: secrets.vic ?? "" }).toString(),
    });
    expect(signIn.status).toBe(401);
  }, 120_000);

  it("fits the record history of the line moved above at 1,366 px", async () => {
    const page = await as("ann");
    await go(page, "/console/suspense");
    const key = await page.locator("#suspense tr.moved td.key").first().textContent();
    await go(page, `/console/records?key=${encodeURIComponent(key ?? "")}`);
    expect(await page.locator("#transfers tr[data-transfer]").count()).toBeGreaterThanOrEqual(1);
    await shoot(page, "record-history");
  }, 120_000);
});
