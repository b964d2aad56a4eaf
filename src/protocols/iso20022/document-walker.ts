import { assert } from "../../assert.ts";
import type { ErrorCode } from "../../errors/catalog.ts";
import type { Position } from "../../errors/position.ts";
import { describeUnstorable, firstUnstorableCharacter } from "../storable-text.ts";
import {
  addExactDecimal, equalExactDecimal, formatExactDecimal, parseExactDecimal, zeroDecimal,
  type ExactDecimal,
} from "./exact-decimal.ts";
import { extractFields, fileFinding } from "./extract-fields.ts";
import { HeaderTotalCheck } from "./header-total.ts";
import {
  appHeaderMapping, isFamilySupported, mappingByRoot, mappingFor, supportedVersions, type Control,
  type MessageMapping,
} from "./mapping.ts";
import { parseMessageIdentifier, type MessageIdentifier } from "./message-identifier.ts";
import type {
  FieldValues, Iso20022Context, Iso20022Event, Iso20022Finding, Iso20022Header, Iso20022Transaction,
} from "./types.ts";
import type { XmlNode } from "./xml-node.ts";

export interface WalkerLimits {
  depthMax: number;
  elementTextBytesMax: number;
  transactionsMax: number;
  captureElementsMax: number;
  findingsMax: number;
}

type CaptureKind = "appHeader" | "header" | "context" | "transaction";

interface Capture {
  kind: CaptureKind;
  root: XmlNode;
  stack: XmlNode[];
  startDepth: number;
  elements: number;
  xmlPath: string;
}

interface Tally {
  count: number;
  sum: ExactDecimal;
  sumExact: boolean;   // false once an amount could not be read: its own finding says why
}

interface OpenContext {
  index: number;
  xmlPath: string;
  node: XmlNode;
  resolved?: Iso20022Context;
  transactionsInside: number;
  tally: Tally;
}

const documentElement = "Document";

function localName(name: string): string {
  const colon = name.indexOf(":");
  return colon < 0 ? name : name.slice(colon + 1);
}

function newTally(): Tally {
  return { count: 0, sum: zeroDecimal, sumExact: true };
}

/**
 * The message logic of the reader, fed with open / text / close events by a tokenizer (saxes when
 * streaming, a fast-xml-parser tree replayed for a single small message). It finds the Document at
 * any depth, picks the mapping from its namespace, keeps ONE transaction's subtree at a time and
 * emits header, transaction, finding and end events. Memory is bounded by the limits, not the file.
 */
export class DocumentWalker {
  stopped = false;
  private readonly names: string[] = [];
  private readonly namespaceScopes: { depth: number; prefixes: Map<string, string> }[] = [];
  private phase: "before" | "document" | "after" = "before";
  private documentDepth = 0;
  private rootDepth = 0;
  private mapping?: MessageMapping;
  private message?: MessageIdentifier;
  private namespace = "";
  private wrapper: string[] = [];
  private rootXmlPath = "";
  private readonly captures: Capture[] = [];
  private readonly headerNode: XmlNode = { name: "#header", children: [], text: "" };
  private headerEmitted = false;
  private headerValues?: FieldValues;
  private appHeader?: FieldValues;
  private appHeaderXmlPath = "";
  private context?: OpenContext;
  private contextCount = 0;
  private transactionCount = 0;
  private transactionsInParent = 0;
  private transactionErrorCount = 0;
  private readonly fileTally = newTally();
  private readonly totalChecks: HeaderTotalCheck[] = [];
  private fileErrorCount = 0;
  private warningCount = 0;
  private findingsEmitted = 0;
  private findingsDropped = 0;
  private ended = false;
  private identifyByRoot = false;

  constructor(
    private readonly limits: WalkerLimits, private readonly emit: (event: Iso20022Event) => void,
  ) {}

  /** A file-scope finding that ends the reading: nothing after it is trusted. */
  fatal(code: ErrorCode, message: string, position: Position = {}, valueMasked?: string): void {
    if (this.stopped) return;
    this.report(fileFinding(code, message, position, "error", valueMasked));
    this.stopped = true;
  }

  get currentXmlPath(): string {
    return `/${this.names.join("/")}`;
  }

  open(qualifiedName: string, attributes: Record<string, string>): void {
    if (this.stopped) return;
    const name = localName(qualifiedName);
    this.names.push(name);
    for (const [attribute, value] of Object.entries(attributes)) {
      if (this.refuseUnstorable(value, `${this.currentXmlPath}/@${attribute}`)) return;
    }
    const depth = this.names.length;
    if (depth > this.limits.depthMax) {
      this.fatal("ISO20022_DEPTH_EXCEEDED", `elements nest deeper than ${this.limits.depthMax}`, {
        xmlPath: this.currentXmlPath,
      });
      return;
    }
    const top = this.captures[this.captures.length - 1];
    if (top !== undefined && top.kind !== "context") {
      this.addNode(top, name, attributes);
      return;
    }
    if (this.phase === "before") {
      this.openOutside(qualifiedName, name, attributes, depth);
      return;
    }
    if (this.phase === "after" || depth <= this.documentDepth) return;
    if (this.identifyByRoot && depth === this.documentDepth + 1) this.identifyFromRoot(name);
    if (this.stopped) return;
    const mapping = this.mapping;
    assert(mapping, "a Document in progress has its mapping");
    if (depth === this.documentDepth + 1) {
      if (this.rootDepth !== 0) return;
      if (name !== mapping.messageRoot) {
        this.fatal(
          "ISO20022_ROOT_UNEXPECTED",
          `${this.message?.id} expects <${mapping.messageRoot}>, found <${name}>`,
          { xmlPath: `/${documentElement}/${name}` },
        );
        return;
      }
      this.rootDepth = depth;
      return;
    }
    if (this.rootDepth === 0) return;
    this.openInsideRoot(mapping, name, attributes, depth, top);
  }

  text(text: string): void {
    if (this.stopped) return;
    if (this.refuseUnstorable(text, this.currentXmlPath)) return;
    if (text.length > this.limits.elementTextBytesMax) {
      this.fatal(
        "ISO20022_ELEMENT_TEXT_TOO_LONG",
        `a text of ${text.length} characters exceeds ${this.limits.elementTextBytesMax}`,
        { xmlPath: this.currentXmlPath },
      );
      return;
    }
    const top = this.captures[this.captures.length - 1];
    if (top === undefined) return;
    const node = top.stack[top.stack.length - 1];
    assert(node, "an open capture has an open node");
    node.text += text;
  }

  close(): void {
    if (this.stopped) return;
    const depth = this.names.length;
    assert(depth > 0, "the tokenizer never closes more elements than it opened");
    const top = this.captures[this.captures.length - 1];
    if (top !== undefined && depth >= top.startDepth) {
      if (depth === top.startDepth) {
        this.captures.pop();
        this.finishCapture(top);
      } else {
        top.stack.pop();
      }
    }
    if (this.phase === "before") {
      const scope = this.namespaceScopes[this.namespaceScopes.length - 1];
      if (scope !== undefined && scope.depth === depth) this.namespaceScopes.pop();
      if (this.wrapper.length === depth) this.wrapper.pop();
    } else if (this.phase === "document") {
      if (depth === this.rootDepth) this.closeRoot();
      if (depth === this.documentDepth) this.phase = "after";
    }
    this.names.pop();
  }

  /**
   * XML 1.0 allows neither NUL nor a lone surrogate, and PostgreSQL could not store them: saxes
   * refuses them as it tokenizes, but a tree parser may decode `&#0;` or `&#xD800;` into text, so
   * the walker, which both feed, refuses them too.
   */
  private refuseUnstorable(text: string, xmlPath: string): boolean {
    const found = firstUnstorableCharacter(text);
    if (!found) return false;
    this.fatal("TEXT_CHARACTER_INVALID", `${xmlPath} ${describeUnstorable(found)}`, { xmlPath });
    return true;
  }

  /** End of input: what could not be known before (a missing Document, counts) is reported here. */
  end(): void {
    if (this.ended) return;
    this.ended = true;
    if (!this.stopped) {
      if (this.phase === "before") {
        this.fatal("ISO20022_DOCUMENT_MISSING", "no ISO 20022 <Document> element found", {});
      }
      else if (this.phase === "document" || this.names.length > 0)
        this.fatal("ISO20022_XML_MALFORMED", "the input ends inside the Document", {
          xmlPath: this.currentXmlPath,
        });
    }
    const summary = {
      transactionCount: this.transactionCount,
      complete: !this.stopped,
      fileErrorCount: this.fileErrorCount,
      warningCount: this.warningCount,
      transactionErrorCount: this.transactionErrorCount,
      findingsDropped: this.findingsDropped,
    };
    this.emit({
      type: "end", summary: this.message ? { ...summary, message: this.message } : summary,
    });
  }

  private report(found: Iso20022Finding): void {
    if (found.severity === "error") this.fileErrorCount++;
    else this.warningCount++;
    if (this.findingsEmitted >= this.limits.findingsMax) {
      this.findingsDropped++;
      return;
    }
    this.findingsEmitted++;
    this.emit({ type: "finding", finding: found });
  }

  private openOutside(
    qualifiedName: string, name: string, attributes: Record<string, string>, depth: number,
  ): void {
    let prefixes: Map<string, string> | undefined;
    for (const [attribute, value] of Object.entries(attributes)) {
      if (attribute !== "xmlns" && !attribute.startsWith("xmlns:")) continue;
      prefixes ??= new Map();
      prefixes.set(attribute === "xmlns" ? "" : attribute.slice(6), value);
    }
    if (prefixes) this.namespaceScopes.push({ depth, prefixes });
    if (name === documentElement) {
      this.openDocument(qualifiedName, depth);
      return;
    }
    if (name === appHeaderMapping.element && this.appHeader === undefined) {
      this.appHeaderXmlPath = this.currentXmlPath;
      this.startCapture("appHeader", name, attributes, depth, this.appHeaderXmlPath);
    }
    this.wrapper.push(name);
  }

  private namespaceOf(qualifiedName: string): string {
    const colon = qualifiedName.indexOf(":");
    const prefix = colon < 0 ? "" : qualifiedName.slice(0, colon);
    for (let i = this.namespaceScopes.length - 1; i >= 0; i--) {
      const uri = this.namespaceScopes[i]?.prefixes.get(prefix);
      if (uri !== undefined) return uri;
    }
    return "";
  }

  /**
   * Which message this is: the Document's namespace; without one, the AppHdr's MsgDefIdr; without
   * either, the root element (read with its family's newest mapped version). The two fallbacks
   * say so in a warning: the sender left out what identifies the message.
   */
  private openDocument(qualifiedName: string, depth: number): void {
    this.phase = "document";
    this.documentDepth = depth;
    this.namespace = this.namespaceOf(qualifiedName);
    const position = { xmlPath: `/${documentElement}` };
    let message = parseMessageIdentifier(this.namespace);
    if (!message && this.namespace === "") {
      const declared = this.appHeader?.values["MsgDefIdr"];
      message = declared === undefined ? undefined : parseMessageIdentifier(declared);
      if (!message) {
        this.identifyByRoot = true;
        return;
      }
      this.report(
        fileFinding(
          "ISO20022_NAMESPACE_MISSING",
          `the Document has no namespace; read as ${message.id}, the AppHdr's MsgDefIdr`, position,
          "warning", message.id,
        ),
      );
    }
    if (!message) {
      this.fatal(
        "ISO20022_MESSAGE_UNKNOWN",
        `namespace ${JSON.stringify(this.namespace.slice(0, 120))} names no ISO 20022 message`,
        position, this.namespace,
      );
      return;
    }
    this.useMessage(message, position);
  }

  /** A Document with neither namespace nor AppHdr: its root element names the family. */
  private identifyFromRoot(name: string): void {
    this.identifyByRoot = false;
    const mapping = mappingByRoot(name);
    const position = { xmlPath: `/${documentElement}/${name}` };
    if (!mapping) {
      this.fatal(
        "ISO20022_MESSAGE_UNKNOWN",
        `the Document has no namespace and <${name}> is the root of no message clearline reads`,
        position, name,
      );
      return;
    }
    const message = parseMessageIdentifier(
      `${mapping.family}.001.${mapping.versions.at(-1) ?? ""}`,
    );
    assert(message, "a mapped family and version form a message identifier");
    this.report(
      fileFinding(
        "ISO20022_NAMESPACE_MISSING",
        `the Document has no namespace and no AppHdr; <${name}> read as ${message.id}, the ` +
        `newest version clearline maps`,
        position, "warning", message.id,
      ),
    );
    this.useMessage(message, position);
  }

  private useMessage(message: MessageIdentifier, position: Position): void {
    this.message = message;
    if (!isFamilySupported(message.family)) {
      this.fatal(
        "ISO20022_MESSAGE_UNSUPPORTED", `${message.id} is not a message clearline reads`, position,
        message.id,
      );
      return;
    }
    const mapping = mappingFor(message.family, message.version);
    if (!mapping) {
      this.fatal(
        "ISO20022_VERSION_UNSUPPORTED",
        `${message.id}: supported versions of ${message.family} are ` +
        `${supportedVersions(message.family).join(", ")}`,
        position, message.id,
      );
      return;
    }
    this.mapping = mapping;
    this.rootXmlPath = `/${documentElement}/${mapping.messageRoot}`;
  }

  private isTransactionPath(mapping: MessageMapping, depth: number): boolean {
    const path = mapping.transactionPath;
    if (depth - this.rootDepth !== path.length) return false;
    for (let i = 0; i < path.length; i++)
      if (this.names[this.rootDepth + i] !== path[i]) return false;
    return true;
  }

  private isContextPath(mapping: MessageMapping, depth: number): boolean {
    const path = mapping.contextPath;
    if (path === undefined || depth - this.rootDepth !== path.length) return false;
    for (let i = 0; i < path.length; i++)
      if (this.names[this.rootDepth + i] !== path[i]) return false;
    return true;
  }

  private openInsideRoot(
    mapping: MessageMapping, name: string, attributes: Record<string, string>, depth: number,
    top: Capture | undefined,
  ): void {
    if (this.isTransactionPath(mapping, depth)) {
      this.emitHeaderOnce();
      if (this.stopped) return;
      if (this.transactionCount >= this.limits.transactionsMax) {
        this.fatal(
          "ISO20022_TRANSACTIONS_TOO_MANY", `more than ${this.limits.transactionsMax} transactions`,
          { xmlPath: this.currentXmlPath },
        );
        return;
      }
      this.transactionsInParent++;
      const parentPath = this.context?.xmlPath ?? this.rootXmlPath;
      const between = mapping.transactionPath.slice(mapping.contextPath?.length ?? 0, -1);
      const xmlPath = [parentPath, ...between, `${name}[${this.transactionsInParent}]`].join("/");
      this.startCapture("transaction", name, attributes, depth, xmlPath);
      return;
    }
    if (top !== undefined) {
      this.addNode(top, name, attributes);
      return;
    }
    if (this.isContextPath(mapping, depth)) {
      this.emitHeaderOnce();
      if (this.stopped) return;
      this.contextCount++;
      this.transactionsInParent = 0;
      const between = (mapping.contextPath ?? []).slice(0, -1);
      const xmlPath = [this.rootXmlPath, ...between, `${name}[${this.contextCount}]`].join("/");
      const capture = this.startCapture("context", name, attributes, depth, xmlPath);
      this.context = {
        index: this.contextCount, xmlPath, node: capture.root, transactionsInside: 0,
        tally: newTally(),
      };
      return;
    }
    if (
      depth === this.rootDepth + 1 && !this.headerEmitted && mapping.headerElements.includes(name)
    ) {
      const capture = this.startCapture(
        "header", name, attributes, depth, `${this.rootXmlPath}/${name}`,
      );
      this.headerNode.children?.push(capture.root);
    }
  }

  private startCapture(
    kind: CaptureKind, name: string, attributes: Record<string, string>, depth: number,
    xmlPath: string,
  ): Capture {
    const root: XmlNode = { name, text: "" };
    if (Object.keys(attributes).length > 0) root.attributes = { ...attributes };
    const capture: Capture = { kind, root, stack: [root], startDepth: depth, elements: 1, xmlPath };
    this.captures.push(capture);
    return capture;
  }

  private addNode(capture: Capture, name: string, attributes: Record<string, string>): void {
    capture.elements++;
    if (capture.elements > this.limits.captureElementsMax) {
      this.fatal(
        "ISO20022_TRANSACTION_TOO_LARGE",
        `<${capture.root.name}> holds more than ${this.limits.captureElementsMax} elements`,
        { xmlPath: capture.xmlPath },
      );
      return;
    }
    const node: XmlNode = { name, text: "" };
    for (const _attribute in attributes) {
      node.attributes = { ...attributes };
      break;
    }
    const parent = capture.stack[capture.stack.length - 1];
    assert(parent, "a capture has an open parent node");
    (parent.children ??= []).push(node);
    capture.stack.push(node);
  }

  private finishCapture(capture: Capture): void {
    switch (capture.kind) {
      case "appHeader": {
        const { fields, findings } = extractFields(
          capture.root, appHeaderMapping.fields, capture.xmlPath, { scope: "file" },
        );
        this.appHeader = fields;
        // The header is an envelope, not the payment: its defects are worth a look, not a refusal.
        for (const found of findings) this.report({ ...found, severity: "warning" });
        return;
      }
      case "header":
        return;
      case "context":
        this.closeContext();
        return;
      case "transaction":
        this.finishTransaction(capture);
        return;
    }
  }

  private emitHeaderOnce(): void {
    if (this.headerEmitted) return;
    this.headerEmitted = true;
    const mapping = this.mapping;
    const message = this.message;
    assert(mapping && message, "the header is emitted inside a supported Document");
    const { fields, findings } = extractFields(this.headerNode, mapping.header, this.rootXmlPath, {
      scope: "file",
    });
    this.headerValues = fields;
    for (const found of findings) this.report(found);
    const amountField = mapping.amountField;
    for (const total of mapping.totals) {
      assert(amountField !== undefined, "a total sums the amountField (checked at load)");
      this.totalChecks.push(new HeaderTotalCheck(total, amountField, fields));
    }
    const header: Iso20022Header = {
      ...fields, message, namespace: this.namespace, wrapper: [...this.wrapper],
      rootXmlPath: this.rootXmlPath,
    };
    if (this.appHeader) {
      header.appHeader = this.appHeader;
      const declared = this.appHeader.values["MsgDefIdr"];
      const declaredMessage = declared === undefined ? undefined : parseMessageIdentifier(declared);
      if (declared !== undefined && declaredMessage?.id !== message.id) {
        this.report(
          fileFinding(
            "ISO20022_APPHDR_MISMATCH",
            `AppHdr MsgDefIdr ${declared} disagrees with the Document namespace ${message.id}; ` +
            `the namespace is used`,
            { xmlPath: this.appHeader.xmlPaths["MsgDefIdr"] ?? this.appHeaderXmlPath }, "warning",
            declared,
          ),
        );
      }
    }
    this.emit({ type: "header", header });
  }

  private resolveContext(open: OpenContext): Iso20022Context {
    if (open.resolved) return open.resolved;
    const mapping = this.mapping;
    assert(mapping, "a context lies inside a supported Document");
    const { fields, findings } = extractFields(open.node, mapping.context, open.xmlPath, {
      scope: "file",
    });
    for (const found of findings) this.report(found);
    open.resolved = { ...fields, index: open.index, xmlPath: open.xmlPath };
    return open.resolved;
  }

  private finishTransaction(capture: Capture): void {
    const mapping = this.mapping;
    assert(mapping, "a transaction lies inside a supported Document");
    this.transactionCount++;
    const index = this.transactionCount;
    const { fields, findings } = extractFields(capture.root, mapping.transaction, capture.xmlPath, {
      scope: "transaction", transactionIndex: index,
    });
    const transaction: Iso20022Transaction = {
      ...fields, index, xmlPath: capture.xmlPath, element: capture.root.name, findings,
    };
    if (this.context) {
      transaction.context = this.resolveContext(this.context);
      this.context.transactionsInside++;
      this.addToTally(this.context.tally, fields, mapping);
    }
    this.addToTally(this.fileTally, fields, mapping);
    for (const check of this.totalChecks) check.add(fields);
    if (findings.some((f) => f.severity === "error")) this.transactionErrorCount++;
    this.emit({ type: "transaction", transaction });
  }

  private addToTally(tally: Tally, fields: FieldValues, mapping: MessageMapping): void {
    tally.count++;
    if (mapping.amountField === undefined) return;
    const amount = fields.values[mapping.amountField];
    const exact = amount === undefined ? undefined : parseExactDecimal(amount);
    if (exact === undefined) tally.sumExact = false;
    else tally.sum = addExactDecimal(tally.sum, exact);
  }

  private closeContext(): void {
    const open = this.context;
    const mapping = this.mapping;
    assert(open && mapping, "a context closes after it opened");
    const context = this.resolveContext(open);
    for (const control of mapping.controls)
      if (control.level === "context") this.checkControl(control, context, open.tally);
    this.context = undefined;
  }

  private closeRoot(): void {
    this.emitHeaderOnce();
    const mapping = this.mapping;
    assert(mapping && this.headerValues, "the root closes after its header");
    for (const control of mapping.controls)
      if (control.level === "header") this.checkControl(control, this.headerValues, this.fileTally);
    for (const check of this.totalChecks) {
      const found = check.finding();
      if (found !== undefined) this.report(found);
    }
  }

  /** NbOfTxs and CtrlSum against what the file actually holds, exactly (no float, no rounding). */
  private checkControl(control: Control, block: FieldValues, tally: Tally): void {
    const announcedCount = block.values[control.count];
    if (
      announcedCount !== undefined && /^\d{1,15}$/.test(announcedCount) &&
      BigInt(announcedCount) !== BigInt(tally.count)
    ) {
      this.report(
        fileFinding(
          "ISO20022_NBOFTXS_MISMATCH",
          `${control.count} announces ${announcedCount} transactions, the file holds ` +
          `${tally.count}`,
          { xmlPath: block.xmlPaths[control.count] ?? this.rootXmlPath }, control.severity,
          announcedCount,
        ),
      );
    }
    const announcedSum = block.values[control.sum];
    const announced = announcedSum === undefined ? undefined : parseExactDecimal(announcedSum);
    if (announced !== undefined && tally.sumExact && !equalExactDecimal(announced, tally.sum)) {
      this.report(
        fileFinding(
          "ISO20022_CTRLSUM_MISMATCH",
          `${control.sum} announces ${announcedSum}, the amounts add up to ` +
          `${formatExactDecimal(tally.sum)}`,
          { xmlPath: block.xmlPaths[control.sum] ?? this.rootXmlPath }, control.severity,
          announcedSum,
        ),
      );
    }
  }
}
