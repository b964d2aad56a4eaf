import type { Pool } from "../db/pool.ts";
import { findPartner } from "../partners/partners.ts";
import { findTenant } from "../tenants/tenants.ts";
import { cutReturnFile, type CutResult } from "./return-cut.ts";
import { latestCutoff, type ReturnCutoffSetting } from "../config/return-cutoff-config.ts";

export interface CutoffOutcome {
  tenant: string;
  partner: string;
  cutoffAt?: Date;
  result?: CutResult;
  error?: string;     // the configured tenant or partner does not exist
}

/**
 * One check of `clearline serve`'s cut-off job: for each configured partner, the cut at its
 * latest cut-off time that has passed. It is the CLI's cut (`partner returns cut --cutoff T`),
 * keyed by partner and cut-off instant, so a cut by both, or a check repeated after a cut-off, is
 * one file: a repeat finds nothing pending up to that instant, or the file already stored. Returns
 * recorded after the cut-off wait for the next one; a cut-off missed while no serve ran is made up
 * by the next check's latest cut-off, which takes everything recorded up to it.
 */
export async function runReturnCutoffs(pool: Pool, settings: readonly ReturnCutoffSetting[], now: Date, isStopped: () => boolean = () => false): Promise<CutoffOutcome[]> {
  const outcomes: CutoffOutcome[] = [];
  for (const setting of settings) {
    if (isStopped()) break;
    const named = { tenant: setting.tenant, partner: setting.partner };
    const tenant = await findTenant(pool, setting.tenant);
    const partner = tenant ? await findPartner(pool, tenant.tenantId, setting.partner) : undefined;
    if (!tenant || !partner) {
      outcomes.push({ ...named, error: `returnCutoffs names tenant ${setting.tenant} and partner ${setting.partner}, which do not exist` });
      continue;
    }
    const cutoffAt = latestCutoff(setting.timesUtc, now);
    outcomes.push({ ...named, cutoffAt, result: await cutReturnFile(pool, tenant.tenantId, partner.partnerId, cutoffAt) });
  }
  return outcomes;
}
