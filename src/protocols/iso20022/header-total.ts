import { assert } from "../../assert.ts";
import {
  addExactDecimal, equalExactDecimal, formatExactDecimal, parseExactDecimal, zeroDecimal,
  type ExactDecimal,
} from "./exact-decimal.ts";
import { fileFinding } from "./extract-fields.ts";
import type { TotalControl } from "./mapping.ts";
import type { FieldValues, Iso20022Finding } from "./types.ts";

interface OtherCurrency {
  currency: string;
  xmlPath: string;
}

/**
 * One header total (pacs.008 GrpHdr/TtlIntrBkSttlmAmt) against the transactions as they pass:
 * ISO 20022 defines it as the sum of every transaction's amount, all in the total's currency.
 * Unlike CtrlSum it has a currency, so the first transaction in another currency is reported at
 * its own Ccy and no sum is compared (a sum across currencies means nothing). The sum is exact,
 * on the decimal text, as for CtrlSum.
 */
export class HeaderTotalCheck {
  private sum: ExactDecimal = zeroDecimal;
  private sumExact = true;  // false once an amount could not be read: its own finding says why
  private otherCurrency?: OtherCurrency;

  constructor(
    private readonly control: TotalControl,
    private readonly amountField: string,
    private readonly header: FieldValues,
  ) {}

  add(transaction: FieldValues): void {
    const text = transaction.values[this.amountField];
    const amount = text === undefined ? undefined : parseExactDecimal(text);
    if (amount === undefined) this.sumExact = false;
    else this.sum = addExactDecimal(this.sum, amount);
    const currencyKey = `${this.amountField}@Ccy`;
    const currency = transaction.values[currencyKey];
    const totalCurrency = this.header.values[`${this.control.total}@Ccy`];
    if (currency === undefined || totalCurrency === undefined) return;
    if (currency === totalCurrency || this.otherCurrency !== undefined) return;
    const xmlPath = transaction.xmlPaths[currencyKey];
    assert(xmlPath !== undefined, "a read Ccy has its xmlPath");
    this.otherCurrency = { currency, xmlPath };
  }

  /** The finding at the end of the file, or undefined when the total holds (or is absent). */
  finding(): Iso20022Finding | undefined {
    const name = this.control.total;
    const announcedText = this.header.values[name];
    const totalCurrency = this.header.values[`${name}@Ccy`];
    if (announcedText === undefined || totalCurrency === undefined) return undefined;
    if (this.otherCurrency !== undefined) {
      const other = this.otherCurrency;
      return fileFinding(
        "ISO20022_TOTAL_CURRENCY_MISMATCH",
        `${this.amountField} in ${other.currency} under ${name} in ${totalCurrency}: ` +
        "a total holds one currency",
        { xmlPath: other.xmlPath }, this.control.severity, other.currency,
      );
    }
    const announced = parseExactDecimal(announcedText);
    if (announced === undefined || !this.sumExact || equalExactDecimal(announced, this.sum))
      return undefined;
    const xmlPath = this.header.xmlPaths[name];
    assert(xmlPath !== undefined, "a read header value has its xmlPath");
    return fileFinding(
      "ISO20022_TOTAL_AMOUNT_MISMATCH",
      `${name} announces ${totalCurrency} ${announcedText}, the transactions' ` +
      `${this.amountField} add up to ${totalCurrency} ${formatExactDecimal(this.sum)}`,
      { xmlPath }, this.control.severity, announcedText,
    );
  }
}
