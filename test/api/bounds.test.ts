import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { limits } from "../../src/config/limits.ts";
import { decimalToMinor } from "../../src/protocols/iso4217/currency.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { givenApiWorld, paymentRequest, type ApiWorld } from "../support/api-scenario.ts";

describe("each HTTP bound, one past its limit", () => {
  let db: TestDatabase;
  let world: ApiWorld;
  beforeAll(async () => {
    db = await createTestDatabase();
    world = await givenApiWorld(db.pool, "bounds");
  });
  afterAll(async () => {
    await world.api.close();
    await db.drop();
  });

  const postPayment = (body: Record<string, unknown>) => world.client.post("/v1/payments", body, { "idempotency-key": randomUUID() });

  it(`refuses a body of ${limits.http.bodyBytesMax + 1} bytes`, async () => {
    const body = JSON.stringify(paymentRequest("big")).replace('"description"', '"x"');
    const padded = body.slice(0, -1) + `,"pad":"${"x".repeat(limits.http.bodyBytesMax)}"}`;
    const response = await world.client.post("/v1/payments", padded, { "idempotency-key": randomUUID() });
    expect(response.status).toBe(413);
    expect(response.json.code).toBe("request_too_large");
  });

  it(`refuses a description of ${limits.http.descriptionCharsMax + 1} characters`, async () => {
    expect((await postPayment(paymentRequest("desc", "1.00", { description: "d".repeat(limits.http.descriptionCharsMax + 1) }))).status).toBe(400);
  });

  it(`refuses a client_reference of ${limits.http.clientReferenceCharsMax + 1} characters`, async () => {
    expect((await postPayment(paymentRequest("r".repeat(limits.http.clientReferenceCharsMax + 1)))).status).toBe(400);
  });

  it(`refuses an account id of ${limits.http.accountIdCharsMax + 1} characters`, async () => {
    expect((await postPayment(paymentRequest("acct", "1.00", { creditor_account: "a".repeat(limits.http.accountIdCharsMax + 1) }))).status).toBe(400);
  });

  it("refuses an amount one minor unit above the largest accepted amount", () => {
    const max = limits.ledger.amountMinorMax;
    expect(decimalToMinor(`${max / 100n}.00`, "USD").ok).toBe(true);
    expect(decimalToMinor(`${max / 100n}.01`, "USD")).toMatchObject({ ok: false, error: { code: "AMOUNT_TOO_LARGE" } });
  });
});
