/** Escapes text for HTML element content and quoted attributes: every value from the database goes through it. */
export function escapeHtml(value: unknown): string {
  return String(value ?? "").replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c] ?? c);
}

/** A template tag: interpolations are escaped unless they are Html (already built by this module). */
export class Html {
  constructor(readonly text: string) {}
  toString(): string { return this.text; }
}

export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  let out = strings[0] ?? "";
  values.forEach((value, index) => {
    const rendered = Array.isArray(value) ? value.map((v) => (v instanceof Html ? v.text : escapeHtml(v))).join("") : value instanceof Html ? value.text : escapeHtml(value);
    out += rendered + (strings[index + 1] ?? "");
  });
  return new Html(out);
}

const style = `body{font:14px system-ui,sans-serif;margin:0;color:#222}nav{background:#1d3557;padding:8px 16px}nav a{color:#fff;margin-right:16px;text-decoration:none}
main{padding:16px;max-width:1200px}table{border-collapse:collapse;width:100%;margin:8px 0}th,td{border-bottom:1px solid #ddd;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#f1f3f5}.num{text-align:right;font-variant-numeric:tabular-nums}.changed{background:#fff3cd}.new{background:#d4edda}.rejected,.error{background:#f8d7da}
.old{color:#a00;text-decoration:line-through}.note{color:#555}button{padding:4px 10px}
form.inline{display:inline}` +
  // Fits 1,366 px and a phone (390 px) without scrolling sideways: long keys wrap anywhere, a
  // picture shrinks, and below 700 px a table.stack shows each row as a card of labelled cells.
  `*{box-sizing:border-box}td,th,p,h2,h3,li{overflow-wrap:anywhere}svg,input,select{max-width:100%}
figure{margin:8px 0;max-width:100%;overflow-x:auto}
.chart-numbers th,.chart-numbers td{padding:2px 6px}
nav{display:flex;flex-wrap:wrap;gap:4px 16px}nav a{margin-right:0}
:focus-visible{outline:3px solid #1d6fe0;outline-offset:2px}
fieldset{border:1px solid #ccc;margin:4px 0;padding:4px 8px}label.choice{display:inline-block;
margin-right:12px}form.decide{margin:8px 0}tr.differs{background:#fff3cd}mark{background:#ffe08a}
table.side-by-side th{overflow-wrap:normal}
article.review{border:1px solid #ddd;border-radius:4px;padding:8px;margin:8px 0}
.waiting{background:#e7f1ff;padding:4px 8px}section.key-group h2{font-size:16px}
@media (max-width:700px){main{padding:8px}table.stack,table.stack tbody,table.stack tr,
table.stack td{display:block;width:100%}table.stack tr:first-child{display:none}
table.stack tr{border-bottom:2px solid #ccc;padding:4px 0}table.stack td{border:0;text-align:left}
table.stack td[data-label]::before{content:attr(data-label) ": ";font-weight:600}}
table.fixed{table-layout:fixed}table.fixed td,table.fixed th{overflow:hidden;text-overflow:ellipsis}
.key{font-family:ui-monospace,monospace;font-size:12px}.secret{background:#d4edda;padding:4px 8px}
form.stacked label{display:block;margin:4px 0}tr.moved{color:#555}.bank-line,.our-line{margin:2px 0}
tr.disabled{color:#777}`;

/** The page frame: no external asset (works offline); the one script, when given, is inline. */
export function page(
  title: string, body: Html, options: { operator?: string; script?: string; admin?: boolean } = {},
): string {
  const admin = options.admin ? html`<a href="/console/operators">Operators</a>
    <a href="/console/webhooks">Webhooks</a>` : html``;
  const nav = options.operator ? html`<nav><a href="/console/files">Files</a>
    <a href="/console/reviews">Reviews</a><a href="/console/records">Records</a>
    <a href="/console/suspense">Suspense</a><a href="/console/accounts">Accounts</a>
    <a href="/console/reconciliation">Reconciliation</a>
    <a href="/console/differences">Differences</a><a href="/console/sources">Sources</a>
    <a href="/console/outbox">Outbox</a>
    <a href="/console/incidents">Incidents</a><a href="/console/fleet">Fleet</a>
    <a href="/console/pictures">Pictures</a>${admin}
    <span style="color:#ccc;float:right">${options.operator}</span></nav>` : html``;
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)} · clearline</title><style>${style}</style></head>
<body>${nav.text}<main><h1>${escapeHtml(title)}</h1>${body.text}</main>${options.script ? `<script>${options.script}</script>` : ""}</body></html>`;
}
