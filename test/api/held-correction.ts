import { addAccountAlias, createPartner } from "../../src/partners/partners.ts";
import { listReviews } from "../../src/records/review-queue.ts";
import type { ApiWorld } from "../support/api-scenario.ts";
import type { TestDatabase } from "../support/database.ts";
import { fixture, ingest, type Scene } from "../files/support.ts";

/**
 * The quickstart over the API's world: original.ach applied (payee two credited 200.00 through its
 * alias), then corrected.ach's 205.00 for payee two held as a conflict for a person to decide.
 */
export async function givenHeldCorrection(db: TestDatabase, world: ApiWorld, partnerName: string): Promise<{ scene: Scene; reviewId: string }> {
  const partner = await createPartner(db.pool, world.tenantId, partnerName);
  if (!partner.ok) throw new Error(partner.error.message);
  const scene = { tenantId: world.tenantId, partner: partner.value };
  await world.client.post("/v1/accounts", { id: "payee-two", kind: "customer", currency: "USD" });
  await addAccountAlias(db.pool, world.tenantId, "aba:021000021:1000002", "payee-two");
  await ingest(db.pool, scene, fixture("ach/original.ach"), "original.ach");
  await ingest(db.pool, scene, fixture("ach/corrected.ach"), "corrected.ach");
  const [item] = await listReviews(db.pool, { tenantId: world.tenantId });
  if (!item) throw new Error("nothing held");
  return { scene, reviewId: item.review_id };
}
