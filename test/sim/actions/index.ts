import type { SimContext } from "../context.ts";
import { killRestart, projectionAdvance } from "./faults.ts";
import { fileCorrection, fileKilledMidUpload, fileOriginal, fileReupload } from "./files.ts";
import { payBurst, payNew, payNewKeySameReference, payRepeat, paySameKeyConcurrently, refund, refundRepeat } from "./http.ts";
import { isoAuthorize, isoBurst, isoRepeat, isoReverse } from "./iso8583.ts";
import { reviewDecide } from "./reviews.ts";

/** Every action the simulation can take, with its weight: how often a step picks it. */
export const actions = {
  pay_new: { weight: 14, run: payNew },
  pay_repeat: { weight: 6, run: payRepeat },
  pay_new_key_same_reference: { weight: 3, run: payNewKeySameReference },
  pay_same_key_concurrent: { weight: 5, run: paySameKeyConcurrently },
  pay_burst: { weight: 8, run: payBurst },
  refund: { weight: 6, run: refund },
  refund_repeat: { weight: 2, run: refundRepeat },
  file_original: { weight: 6, run: fileOriginal },
  file_reupload: { weight: 3, run: fileReupload },
  file_correction: { weight: 6, run: fileCorrection },
  file_killed_mid_upload: { weight: 2, run: fileKilledMidUpload },
  review_decide: { weight: 6, run: reviewDecide },
  iso_authorize: { weight: 10, run: isoAuthorize },
  iso_repeat: { weight: 4, run: isoRepeat },
  iso_burst: { weight: 3, run: isoBurst },
  iso_reverse: { weight: 4, run: isoReverse },
  projection_advance: { weight: 4, run: projectionAdvance },
  kill_restart: { weight: 3, run: killRestart },
} as const satisfies Record<string, { weight: number; run: (ctx: SimContext) => Promise<void> }>;

export type ActionKind = keyof typeof actions;

export const actionWeights = Object.fromEntries(Object.entries(actions).map(([kind, a]) => [kind, a.weight])) as Record<ActionKind, number>;
