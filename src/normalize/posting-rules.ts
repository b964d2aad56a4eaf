import achRulesJson from "../../protocols/posting-rules/ach.json" with { type: "json" };
import isoRulesJson from "../../protocols/posting-rules/iso20022.json" with { type: "json" };
import httpRulesJson from "../../protocols/posting-rules/http.json" with { type: "json" };
import iso8583RulesJson from "../../protocols/posting-rules/iso8583.json" with { type: "json" };
import { assert } from "../assert.ts";
import { channelNamed, type CanonicalRecord, type Channel } from "./canonical-record.ts";
import type { Leg, Transfer } from "./transfer.ts";

/**
 * Posting rules as data (protocols/posting-rules/*.json): a record's channel and kind (and, when a
 * rule says so, its transaction code or a zero amount) decide what happens to it. This module is
 * pure: it turns a record into a balanced transfer whose key derives from the record's natural
 * key; the pipeline resolves the counterparty alias and the partner's accounts beforehand.
 */
export type { Leg, Transfer } from "./transfer.ts";

/**
 * A leg's account: the partner's settlement or suspense account, the resolved counterparty, or an
 * account the record names (`named`, in the attribute the leg gives).
 */
export type RuleAccount = "settlement" | "counterparty" | "suspense" | "named";
/**
 * `reverse-original`: a return, matched to its original by link ids, undoes it once.
 * `undo-named-original`: the record names its original by natural key and undoes part of it, its
 * legs mirrored for the record's amount; the undos of one original never add up above its amount.
 */
export type RuleAction = "post" | "record" | "reverse-original" | "undo-named-original";

export interface PostingRule {
  channel: Channel;
  kind: string;
  action: RuleAction;
  transactionCodes?: string[];          // ACH only: the rule applies to these codes
  amount?: "zero";                      // the rule applies only to zero amounts
  counterparty?: string;                // attribute holding the counterparty's alias
  legs?: Array<{ direction: "D" | "C"; account: RuleAccount; attribute?: string }>;
  transferKind?: string;                // the posting's kind; default `<channel>-<kind>`
  // or: the attribute holding the posting's kind (an ISO 8583 processing code's)
  transferKindAttribute?: string;
  // the posting's key is `<natural key>:<stage>`; default "post"
  transferStage?: string;
  /**
   * `intent`: the posting's key is `<transferKeyPrefix>:<intent id>:<stage>` (the HTTP channel's
   * ledger keys, `api:...`), not `<natural key>:<stage>`.
   */
  transferKeyBase?: "intent";
  transferKeyPrefix?: string;
  /**
   * A posting the debit account cannot cover is applied as advised, its debit leg taken from the
   * account in `suspenseAttribute`.
   */
  insufficientFunds?: "suspense";
  suspenseAttribute?: string;
  /**
   * reverse-original only: by the stage of the ORIGINAL's transfer (`<original key>:<stage>`), the
   * stage and kind of the reversal's, keyed `<original key>:<transferStage>` (one per original).
   * Without it a return posts `<its own key>:post`, of kind `<channel>-<kind>`.
   */
  reversalStages?: Record<string, { transferStage: string; transferKind: string }>;
}

interface RulesFile {
  channel: string;
  rules: Array<Record<string, unknown>>;
}

const ACTIONS = new Set<RuleAction>(["post", "record", "reverse-original", "undo-named-original"]);
const ACCOUNTS = new Set<RuleAccount>(["settlement", "counterparty", "suspense", "named"]);

/** Loads and checks a rules file: a malformed rule is a bug in our data, so it asserts. */
export function loadPostingRules(file: RulesFile): PostingRule[] {
  const channel = channelNamed(file.channel);
  assert(channel !== undefined, `posting rules channel ${file.channel}`);
  return file.rules.map((raw, index) => {
    const where = `posting rule ${channel}[${index}]`;
    const kind = raw.kind;
    const action = raw.action as RuleAction;
    assert(typeof kind === "string" && kind.length > 0, `${where} names a kind`);
    assert(ACTIONS.has(action), `${where} action ${String(raw.action)}`);
    const rule: PostingRule = { channel, kind, action };
    if (raw.transactionCodes !== undefined) {
      assert(
        Array.isArray(raw.transactionCodes) &&
        raw.transactionCodes.every((c) => typeof c === "string"),
        `${where} transactionCodes`,
      );
      rule.transactionCodes = raw.transactionCodes as string[];
    }
    if (raw.amount !== undefined) {
      assert(raw.amount === "zero", `${where} amount condition is "zero"`);
      rule.amount = "zero";
    }
    if (action === "post") {
      const legs = raw.legs as PostingRule["legs"];
      assert(Array.isArray(legs) && legs.length === 2, `${where} posts exactly two legs`);
      assert(
        legs.filter((l) => l.direction === "D").length === 1 &&
        legs.filter((l) => l.direction === "C").length === 1,
        `${where} has one debit and one credit leg`,
      );
      assert(legs.every((l) => ACCOUNTS.has(l.account)), `${where} legs name settlement, ` +
        `counterparty, suspense or named`);
      assert(
        legs.every((l) => (l.account === "named") === (typeof l.attribute === "string" &&
        l.attribute.length > 0)),
        `${where}: a named leg (and only it) gives the attribute holding its account`,
      );
      if (legs.some((l) => l.account === "counterparty")) {
        assert(
          typeof raw.counterparty === "string" && raw.counterparty.length > 0,
          `${where} names the attribute of its counterparty`,
        );
        rule.counterparty = raw.counterparty;
      }
      rule.legs = legs.map((l) =>
        l.attribute === undefined
          ? { direction: l.direction, account: l.account }
          : { direction: l.direction, account: l.account, attribute: l.attribute },
      );
      if (typeof raw.transferKind === "string") rule.transferKind = raw.transferKind;
      if (typeof raw.transferStage === "string") rule.transferStage = raw.transferStage;
      loadPostingOptions(raw, rule, where);
    } else if (action === "reverse-original") {
      assert(raw.legs === undefined && raw.transferKindAttribute === undefined, `${where}: a ` +
        `reverse-original rule takes its legs from the original`);
      loadReversalOptions(raw, rule, where);
    } else if (action === "undo-named-original") {
      loadUndoRule(raw, rule, where);
    } else {
      assert(raw.legs === undefined, `${where}: only a "post" rule has legs`);
      assert(
        raw.transferKindAttribute === undefined && raw.insufficientFunds === undefined &&
        raw.suspenseAttribute === undefined,
        `${where}: only a "post" rule has posting options`,
      );
    }
    return rule;
  });
}

/**
 * A reversal's key and kind per stage of the original's transfer, and what a reversal the funds
 * refuse becomes.
 */
function loadReversalOptions(raw: Record<string, unknown>, rule: PostingRule, where: string): void {
  if (raw.reversalStages !== undefined) {
    const stages = raw.reversalStages as Record<
      string,
      { transferStage?: unknown; transferKind?: unknown }
    >;
    assert(
      typeof stages === "object" && stages !== null && Object.keys(stages).length > 0,
      `${where}: reversalStages maps original stages`,
    );
    for (const [stage, option] of Object.entries(stages)) {
      assert(
        typeof option.transferStage === "string" && option.transferStage.length > 0 &&
        option.transferStage !== stage,
        `${where}: reversalStages.${stage} names another stage`,
      );
      assert(
        typeof option.transferKind === "string" && option.transferKind.length > 0,
        `${where}: reversalStages.${stage} names a transfer kind`,
      );
    }
    rule.reversalStages = Object.fromEntries(
      Object.entries(stages).map(([stage, o]) => [
        stage, { transferStage: o.transferStage as string, transferKind: o.transferKind as string },
      ]),
    );
  }
  loadPostingOptions(
    { insufficientFunds: raw.insufficientFunds, suspenseAttribute: raw.suspenseAttribute }, rule,
    where,
  );
}

/**
 * An undo posts the original's legs mirrored: it has no legs of its own, a fixed kind, and its
 * key's stage and base.
 */
function loadUndoRule(raw: Record<string, unknown>, rule: PostingRule, where: string): void {
  assert(raw.legs === undefined, `${where}: an undo mirrors its original's legs and names none`);
  assert(
    typeof raw.transferKind === "string" && raw.transferKind.length > 0,
    `${where}: an undo names its transferKind`,
  );
  assert(
    typeof raw.transferStage === "string" && raw.transferStage.length > 0,
    `${where}: an undo names its transferStage`,
  );
  rule.transferKind = raw.transferKind;
  rule.transferStage = raw.transferStage;
  if (raw.transferKeyBase !== undefined) {
    assert(raw.transferKeyBase === "intent", `${where}: transferKeyBase is "intent"`);
    const prefix = raw.transferKeyPrefix;
    const named = typeof prefix === "string" && prefix.length > 0;
    assert(named, `${where}: an intent key names its transferKeyPrefix`);
    rule.transferKeyBase = "intent";
    rule.transferKeyPrefix = prefix;
  }
}

/** The transfer kind taken from an attribute, and what a posting the funds refuse becomes. */
function loadPostingOptions(raw: Record<string, unknown>, rule: PostingRule, where: string): void {
  if (raw.transferKindAttribute !== undefined) {
    assert(
      typeof raw.transferKindAttribute === "string" && raw.transferKindAttribute.length > 0,
      `${where}: transferKindAttribute names an attribute`,
    );
    assert(raw.transferKind === undefined, `${where}: a fixed transferKind or a ` +
      `transferKindAttribute, not both`);
    rule.transferKindAttribute = raw.transferKindAttribute;
  }
  if (raw.insufficientFunds === undefined) {
    assert(raw.suspenseAttribute === undefined, `${where}: suspenseAttribute goes with ` +
      `"insufficientFunds": "suspense"`);
    return;
  }
  assert(raw.insufficientFunds === "suspense", `${where}: insufficientFunds is "suspense"`);
  assert(
    typeof raw.suspenseAttribute === "string" && raw.suspenseAttribute.length > 0,
    `${where}: "insufficientFunds": "suspense" names the attribute holding the suspense account`,
  );
  rule.insufficientFunds = "suspense";
  rule.suspenseAttribute = raw.suspenseAttribute;
}

const rulesByChannel = new Map<Channel, PostingRule[]>([
  ["ach", loadPostingRules(achRulesJson)],
  ["iso20022", loadPostingRules(isoRulesJson)],
  ["http", loadPostingRules(httpRulesJson)],
  ["iso8583", loadPostingRules(iso8583RulesJson)],
]);

/**
 * The first rule of the record's channel that matches it; none: the record is rejected, never
 * guessed.
 */
export function postingRuleFor(
  record: Pick<CanonicalRecord, "channel" | "kind" | "amount" | "attributes">,
  rules = rulesByChannel.get(record.channel) ?? [],
): PostingRule | undefined {
  return rules.find(
    (rule) =>
      rule.kind === record.kind &&
      (rule.amount === undefined || record.amount === 0n) &&
      (rule.transactionCodes === undefined ||
        rule.transactionCodes.includes(record.attributes.transactionCode ?? "")),
  );
}

/**
 * The fixed rule from a record's natural key to the key of its posting (`:post`, or the stage its
 * rule names).
 */
export function transferKeyOf(
  naturalKey: string, rule?: Pick<PostingRule, "transferStage">,
): string {
  return `${naturalKey}:${rule?.transferStage ?? "post"}`;
}

/**
 * The key of a record's posting by its rule: from its natural key, or (`transferKeyBase:
 * "intent"`) from the rule's key prefix and the record's intent id.
 */
export function recordTransferKeyOf(
  record: Pick<CanonicalRecord, "naturalKey" | "intentId">,
  rule: Pick<PostingRule, "transferStage" | "transferKeyBase" | "transferKeyPrefix">,
): string {
  if (rule.transferKeyBase !== "intent") return transferKeyOf(record.naturalKey, rule);
  const prefix = rule.transferKeyPrefix;
  assert(prefix !== undefined, "a rule keyed by the intent names its key prefix (checked at load)");
  return `${prefix}:${record.intentId}:${rule.transferStage ?? "post"}`;
}

/**
 * The accounts a rule's `named` legs take from the record's attributes (undefined when one is
 * missing).
 */
export function namedAccountsOf(
  record: Pick<CanonicalRecord, "attributes">, rule: PostingRule,
): string[] | undefined {
  const named = (rule.legs ?? [])
    .filter((leg) => leg.account === "named")
    .map((leg) => record.attributes[leg.attribute ?? ""]);
  return named.every((a): a is string => a !== undefined && a !== "") ? named : undefined;
}

/**
 * Keys of the postings a review decision makes (docs/decisions/0011). The review id derives from
 * the natural key and the held content's fingerprint, so each key names exactly one content under
 * one key: a repeated decision is a replay, never a second posting.
 */
export function replacementTransferKeyOf(naturalKey: string, reviewId: string): string {
  return `${naturalKey}:replace:${reviewId}`;
}

export function newPaymentTransferKeyOf(naturalKey: string, reviewId: string): string {
  return `${naturalKey}:new:${reviewId}`;
}

/** A transfer is compensated at most once: the transfer table's primary key holds this key once. */
export function compensationKeyOf(transferKey: string): string {
  return `${transferKey}:compensate`;
}

/**
 * Transfer kinds of technical corrections: a statement shows them as such, never as refunds or
 * returns.
 */
export const correctionKinds = {
  compensation: "correction-compensation", replacement: "correction-replacement",
} as const;

/**
 * The compensation of a posted transfer: every leg mirrored (same account, amount and currency,
 * the other side), on the original's value and settlement dates, so that the two together sum to
 * nothing on every date.
 */
export function compensationFor(
  original: {
    tenantId: string; transferKey: string; valueDate: string; legs: readonly Leg[];
    settlementDate?: string;
  },
  sourceRef: string,
): Transfer {
  assert(original.legs.length >= 2, "a posted transfer has at least two legs");
  return {
    tenantId: original.tenantId, transferKey: compensationKeyOf(original.transferKey),
    kind: correctionKinds.compensation, valueDate: original.valueDate, sourceRef,
    legs: original.legs.map((leg) => ({ ...leg, direction: leg.direction === "D" ? "C" : "D" })),
    // it settles with the posting it corrects (docs/decisions/0101)
    ...(original.settlementDate === undefined ? {} : { settlementDate: original.settlementDate }),
  };
}

export interface PartnerAccounts {
  settlement: string;
  suspense: string;
}

/**
 * A "post" rule applied to a record: two legs of the record's amount between the partner's
 * accounts and the counterparty (its resolved account, else the partner's suspense account).
 */
export function transferFor(
  record: CanonicalRecord, rule: PostingRule, accounts: PartnerAccounts | undefined,
  counterpartyAccount: string | undefined, transferKey = transferKeyOf(record.naturalKey, rule),
): Transfer {
  assert(rule.action === "post" && rule.legs !== undefined, "transferFor takes a post rule");
  assert(record.amount > 0n, "a posted record has a positive amount");
  const partnerAccount = (name: "settlement" | "suspense") => {
    assert(
      accounts !== undefined,
      `rule ${rule.channel} ${rule.kind} posts to the partner's ${name} account: the arrival has ` +
      `a partner`,
    );
    return accounts[name];
  };
  const legs: Leg[] = rule.legs.map((leg) => ({
    accountId:
      leg.account === "named"
        ? (record.attributes[leg.attribute ?? ""] ?? "")
        : leg.account === "settlement" || leg.account === "suspense"
          ? partnerAccount(leg.account)
          : (counterpartyAccount ?? partnerAccount("suspense")),
    direction: leg.direction,
    amountMinor: record.amount,
    currency: record.currency,
  }));
  return transferOf(record, transferKey, legs, transferKindOf(record, rule));
}

function transferKindOf(record: CanonicalRecord, rule: PostingRule): string | undefined {
  if (rule.transferKindAttribute === undefined) return rule.transferKind;
  const kind = record.attributes[rule.transferKindAttribute];
  assert(
    kind !== undefined && kind !== "",
    `record ${record.naturalKey} gives its transfer kind in ${rule.transferKindAttribute}`,
  );
  return kind;
}

/**
 * The posting of a rule with `"insufficientFunds": "suspense"` that the debit account could not
 * cover: the same transfer (key, kind, amount) with its debit leg taken from the suspense account
 * the record names. The debit is the leg a funds check refuses (it reduces a customer account).
 */
export function suspenseTransferFor(
  record: CanonicalRecord, rule: PostingRule, refused: Transfer,
): Transfer {
  assert(
    rule.insufficientFunds === "suspense" && rule.suspenseAttribute !== undefined,
    "suspenseTransferFor takes a rule that posts to suspense",
  );
  const suspense = record.attributes[rule.suspenseAttribute];
  assert(
    suspense !== undefined && suspense !== "",
    `record ${record.naturalKey} names its suspense account in ${rule.suspenseAttribute}`,
  );
  return {
    ...refused,
    legs: refused.legs.map((leg) =>
      leg.direction === "D" ? { ...leg, accountId: suspense } : leg,
    ),
  };
}

/** A return: the original's legs with their directions swapped, for the return's amount. */
export function reversalFor(
  record: CanonicalRecord, originalLegs: Array<Pick<Leg, "accountId" | "direction">>,
  transferKey = transferKeyOf(record.naturalKey), kind?: string,
): Transfer {
  assert(originalLegs.length === 2, "an original posted by a rule has two legs");
  assert(record.amount > 0n, "a posted return has a positive amount");
  const legs: Leg[] = originalLegs.map((leg) => ({
    accountId: leg.accountId,
    direction: leg.direction === "D" ? "C" : "D",
    amountMinor: record.amount,
    currency: record.currency,
  }));
  return transferOf(record, transferKey, legs, kind);
}

/**
 * The key and kind of a return's posting: derived from the original's key by the stage of the
 * original's transfer when the rule says so (one reversal per original, whatever record asks);
 * else the return's own `:post`.
 */
export function reversalKeyOf(
  record: Pick<CanonicalRecord, "naturalKey">, rule: PostingRule,
  original: { naturalKey: string; transferKey: string },
): { transferKey: string; kind?: string } {
  const stage = original.transferKey.startsWith(`${original.naturalKey}:`)
    ? original.transferKey.slice(original.naturalKey.length + 1)
    : "";
  const option = rule.reversalStages?.[stage];
  if (rule.reversalStages !== undefined) {
    assert(
      option !== undefined,
      `rule ${rule.channel} ${rule.kind} reverses transfers of stage ${stage}`,
    );
  }
  return option === undefined
    ? { transferKey: transferKeyOf(record.naturalKey) }
    : { transferKey: `${original.naturalKey}:${option.transferStage}`, kind: option.transferKind };
}

/**
 * An undo of part of a named original (`undo-named-original`): the original's legs, each on the
 * other side, for the undo's amount, keyed and kinded by the undo's rule.
 */
export function partialUndoFor(
  record: CanonicalRecord, rule: PostingRule,
  originalLegs: ReadonlyArray<Pick<Leg, "accountId" | "direction">>,
): Transfer {
  assert(rule.action === "undo-named-original", "partialUndoFor takes an undo rule");
  assert(originalLegs.length >= 2, "an original posted by a rule has at least two legs");
  assert(record.amount > 0n, "an undo has a positive amount");
  const legs: Leg[] = originalLegs.map((leg) => ({
    accountId: leg.accountId,
    direction: leg.direction === "D" ? "C" : "D",
    amountMinor: record.amount,
    currency: record.currency,
  }));
  return transferOf(record, recordTransferKeyOf(record, rule), legs, rule.transferKind);
}

function transferOf(
  record: CanonicalRecord, transferKey: string, legs: Leg[],
  kind = `${record.channel}-${record.kind}`,
): Transfer {
  const transfer: Transfer = {
    tenantId: record.tenantId, transferKey, kind, valueDate: record.valueDate, legs,
  };
  if (record.settlementDate !== undefined) transfer.settlementDate = record.settlementDate;
  const source =
    record.source.ref ??
    [record.channel, record.source.fileId, record.source.position]
      .filter((s) => s !== undefined)
      .join(":");
  if (source) transfer.sourceRef = source;
  return transfer;
}
