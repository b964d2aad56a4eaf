import { XMLBuilder } from "fast-xml-parser";
import { fail, ok, type Result } from "../../errors/finding.ts";
import type { Iso20022Finding } from "./types.ts";
import { mappingFor } from "./mapping.ts";

/** What one status line says about one transaction of an ingested pacs.008. */
export interface TransactionStatus {
  originalInstrId?: string;
  originalEndToEndId?: string;
  originalTxId?: string;
  originalUetr?: string;
  status: "ACSC" | "ACCC" | "ACCP" | "ACTC" | "PDNG" | "RJCT";
  reasonCode?: string;          // ISO external status reason code (e.g. AC01); mandatory for RJCT
  additionalInformation?: string;
}

export interface Pacs002Input {
  version?: string;             // "10".."14"; default "10"
  messageId: string;
  creationDateTime: string;     // passed in: a pure codec reads no clock
  originalMessageId: string;
  originalMessageNameId: string; // e.g. "pacs.008.001.08"
  groupStatus?: "ACCP" | "ACSC" | "PART" | "RJCT" | "PDNG"; // the status of the original message as a whole
  instructingAgentBic?: string;
  instructedAgentBic?: string;
  transactions: TransactionStatus[];
}

const builder = new XMLBuilder({ ignoreAttributes: false, attributeNamePrefix: "@_", format: true, indentBy: "  ", suppressEmptyNode: true, processEntities: true });

function agent(bic: string | undefined): object | undefined {
  return bic === undefined ? undefined : { FinInstnId: { BICFI: bic } };
}

function withoutUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}

/**
 * A pacs.002 FI-to-FI payment status report for an ingested pacs.008: one TxInfAndSts per
 * transaction, ACSC or RJCT with its reason. The XML is written by fast-xml-parser (values
 * escaped) and reads back through our own reader.
 */
export function writePacs002(input: Pacs002Input): Result<string, Iso20022Finding[]> {
  const version = input.version ?? "10";
  const findings: Iso20022Finding[] = [];
  if (!mappingFor("pacs.002", version)) {
    findings.push({ code: "ISO20022_VERSION_UNSUPPORTED", severity: "error", message: `pacs.002.001.${version} is not a version clearline writes`, position: {}, scope: "file" });
  }
  input.transactions.forEach((transaction, i) => {
    const xmlPath = `/Document/FIToFIPmtStsRpt/TxInfAndSts[${i + 1}]`;
    if (transaction.status === "RJCT" && !transaction.reasonCode) {
      findings.push({ code: "ISO20022_STATUS_REASON_MISSING", severity: "error", message: "a rejection needs a reason code", position: { xmlPath: `${xmlPath}/StsRsnInf/Rsn/Cd`, transactionIndex: i + 1 }, scope: "transaction" });
    }
    if (!transaction.originalUetr && !transaction.originalEndToEndId && !transaction.originalTxId && !transaction.originalInstrId) {
      findings.push({ code: "ISO20022_FIELD_MISSING", severity: "error", message: "a status line names its original transaction", position: { xmlPath, transactionIndex: i + 1 }, scope: "transaction" });
    }
  });
  if (findings.length > 0) return fail(findings);
  const document = {
    Document: {
      "@_xmlns": `urn:iso:std:iso:20022:tech:xsd:pacs.002.001.${version}`,
      FIToFIPmtStsRpt: {
        GrpHdr: withoutUndefined({ MsgId: input.messageId, CreDtTm: input.creationDateTime, InstgAgt: agent(input.instructingAgentBic), InstdAgt: agent(input.instructedAgentBic) }),
        OrgnlGrpInfAndSts: withoutUndefined({ OrgnlMsgId: input.originalMessageId, OrgnlMsgNmId: input.originalMessageNameId, GrpSts: input.groupStatus }),
        TxInfAndSts: input.transactions.map((transaction) => withoutUndefined({
          OrgnlInstrId: transaction.originalInstrId,
          OrgnlEndToEndId: transaction.originalEndToEndId,
          OrgnlTxId: transaction.originalTxId,
          OrgnlUETR: transaction.originalUetr,
          TxSts: transaction.status,
          StsRsnInf: transaction.reasonCode === undefined ? undefined : withoutUndefined({ Rsn: { Cd: transaction.reasonCode }, AddtlInf: transaction.additionalInformation }),
        })),
      },
    },
  };
  return ok(`<?xml version="1.0" encoding="UTF-8"?>\n${builder.build(document) as string}`);
}
