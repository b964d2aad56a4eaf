import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CardKeys } from "../../src/cards/card-key.ts";
import type { InboundEndpoint } from "../../src/gateway/inbound-endpoint.ts";
import { cardRequest, reversalOf, SchemeServer, type SchemeClient } from "../support/scheme-simulator.ts";
import { createTenant } from "../../src/tenants/tenants.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { authorizeOverHttp, impatient, startTestGateway, type TestGateway } from "./outbound-support.ts";
import { capturedLogger, connectClient, eventually, givenIssuer, listenPatientScheme, startTestEndpoint, testKeys, testPan } from "./support.ts";

/**
 * No PAN in clear anywhere: every gateway scenario runs here against its own database with every
 * log line (debug level, the most talkative) captured; then every text column of every table and
 * every log line is searched for the test PANs. The other gateway files prove the behaviours; this
 * one proves that none of them leaves card data behind.
 */
describe("card data at rest and in logs", () => {
  let db: TestDatabase;
  let keys: CardKeys;
  let endpoint: InboundEndpoint;
  let client: SchemeClient;
  let scheme: SchemeServer;
  let gateway: TestGateway;
  const captured = capturedLogger("debug");
  const issuerPan = testPan("498765", 42);
  const unknownCardPan = testPan("498765", 43);
  const unknownIssuerPan = testPan("377777", 44);
  const acquiredPan = testPan("510510", 45);
  const testPans = [issuerPan, unknownCardPan, unknownIssuerPan, acquiredPan];

  beforeAll(async () => {
    db = await createTestDatabase();
    keys = testKeys();
    await givenIssuer(db.pool, keys, { name: "pan-scan-issuer", pans: [issuerPan], balanceMinor: 50_000n });
    endpoint = await startTestEndpoint(db.pool, keys, captured.logger);
    client = await connectClient(endpoint);

    // Issuer side: approve, repeat, 94, reverse, repeat the reversal, orphan + late original, unknown card and issuer, track 2 only, malformed.
    let stan = 1;
    const approved = cardRequest({ pan: issuerPan, amountMinor: 1_000n, stan: stan++ });
    await client.request(approved);
    await client.request({ ...approved, mti: "0101" });
    await client.request({ ...approved, mti: "0101", fields: { ...approved.fields, 4: "000000009999" } });
    const reversal = reversalOf(approved, { stan: stan++ });
    await client.request(reversal);
    await client.request({ ...reversal, mti: "0401" });
    const late = cardRequest({ pan: issuerPan, amountMinor: 500n, stan: stan++ });
    await client.request(reversalOf(late, { stan: stan++ }));
    await client.request(late);
    await client.request(cardRequest({ pan: unknownCardPan, amountMinor: 100n, stan: stan++ }));
    await client.request(cardRequest({ pan: unknownIssuerPan, amountMinor: 100n, stan: stan++ }));
    const { 2: _pan, ...withoutPan } = cardRequest({ pan: issuerPan, amountMinor: 200n, stan: stan++ }).fields;
    await client.request({ mti: "0100", fields: { ...withoutPan, 35: `${issuerPan}=2912201` } });
    await client.request({ mti: "0200", fields: { ...cardRequest({ pan: issuerPan, amountMinor: 300n, stan: stan++ }).fields } });
    // A message whose PAN lands where a number of another length is expected.
    client.sendFrameBody(Buffer.from(`0100${"4".padEnd(16, "0")}99${issuerPan}`, "latin1"));
    await client.nextUnmatched();

    // Acquirer side: approved, never answered (reversal), late answer, invalid request.
    const tenant = await createTenant(db.pool, "pan-scan-acquirer");
    if (!tenant.ok) throw new Error(tenant.error.message);
    scheme = await listenPatientScheme();
    gateway = await startTestGateway(db.pool, keys, captured.logger, scheme.port, impatient);
    const body = (amount: string) => ({ card: acquiredPan, amount, currency: "EUR", terminal: "TERM0001", merchant: "MERCHANT0000001" });
    await authorizeOverHttp(gateway.baseUrl, tenant.value.apiKey, "scan-1", body("10.00"));
    scheme.behaviour = () => ({ kind: "drop" });
    const reversed = await authorizeOverHttp(gateway.baseUrl, tenant.value.apiKey, "scan-2", body("11.00"));
    scheme.behaviour = (message) => ({ kind: "answer", responseCode: "00", delayMs: message.mti === "0100" ? 800 : 0 });
    await authorizeOverHttp(gateway.baseUrl, tenant.value.apiKey, "scan-3", body("12.00"));
    await authorizeOverHttp(gateway.baseUrl, tenant.value.apiKey, "scan-4", body("1.234"));
    await authorizeOverHttp(gateway.baseUrl, tenant.value.apiKey, "scan-5", { ...body("1.00"), card: `${acquiredPan}00000` });
    await eventually(async () => {
      const { rows } = await db.pool.query("SELECT 1 FROM iso8583_outbound WHERE reversal_state = 'acknowledged' OR late_response_code IS NOT NULL");
      return rows.length >= 2 && reversed.json.status === "reversed";
    }, "outbound reversal acknowledged and late response recorded");
  });
  afterAll(async () => {
    await client.close();
    await endpoint.close();
    await gateway.stop();
    await scheme.close();
    await db.drop();
  });

  it("finds none of the test PANs in any text column of any table", async () => {
    const { rows: columns } = await db.pool.query<{ table_name: string; column_name: string }>(
      `SELECT c.table_name, c.column_name FROM information_schema.columns c JOIN information_schema.tables t USING (table_schema, table_name)
        WHERE c.table_schema = 'public' AND t.table_type = 'BASE TABLE' AND c.data_type IN ('text', 'character varying', 'character', 'jsonb', 'json')`,
    );
    expect(columns.length).toBeGreaterThan(20);
    const found: string[] = [];
    let rowsScanned = 0;
    for (const { table_name: table, column_name: column } of columns) {
      const { rows } = await db.pool.query<{ scanned: string; hits: string }>(
        `SELECT count(*)::text AS scanned, count(*) FILTER (WHERE ${column}::text LIKE ANY ($1::text[]))::text AS hits FROM ${table}`,
        [testPans.map((pan) => `%${pan}%`)],
      );
      rowsScanned += Number(rows[0]?.scanned ?? 0);
      if (Number(rows[0]?.hits ?? 0) > 0) found.push(`${table}.${column}`);
    }
    expect(found).toEqual([]);
    expect(rowsScanned).toBeGreaterThan(100);
  });

  it("finds none of the test PANs in the captured logs, which do show them masked", () => {
    const text = captured.lines.join("");
    expect(captured.lines.length).toBeGreaterThan(20);
    expect(testPans.filter((pan) => text.includes(pan))).toEqual([]);
    expect(text).toContain(`498765******${issuerPan.slice(-4)}`);
  });
});
