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
.old{color:#a00;text-decoration:line-through}.note{color:#555}button{padding:4px 10px}form.inline{display:inline}`;

/** The page frame: no external asset (works offline); the one script, when given, is inline. */
export function page(title: string, body: Html, options: { operator?: string; script?: string } = {}): string {
  const nav = options.operator ? html`<nav><a href="/console/files">Files</a>
    <a href="/console/reviews">Reviews</a><a href="/console/records">Records</a>
    <a href="/console/suspense">Suspense</a><a href="/console/accounts">Accounts</a>
    <a href="/console/differences">Differences</a><a href="/console/outbox">Outbox</a>
    <a href="/console/incidents">Incidents</a><a href="/console/fleet">Fleet</a>
    <span style="color:#ccc;float:right">${options.operator}</span></nav>` : html``;
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)} · clearline</title><style>${style}</style></head>
<body>${nav.text}<main><h1>${escapeHtml(title)}</h1>${body.text}</main>${options.script ? `<script>${options.script}</script>` : ""}</body></html>`;
}
