/**
 * The re-upload page's one script, inline (no CDN, no build step): read the chosen file, POST its
 * bytes to the preview route, show every record's verdict (changed ones with the old and the new
 * amount side by side), then confirm (the same bytes, one Idempotency-Key per preview) or cancel.
 * Text goes in through textContent only; amounts come as decimal strings from the server (exact minor
 * units formatted there), never computed here.
 */
export const uploadScript = String.raw`
(function () {
  const csrf = document.body.dataset.csrf;
  const input = document.getElementById("file");
  const out = document.getElementById("preview");
  const actions = document.getElementById("actions");
  const result = document.getElementById("result");
  let chosen = null, key = null;
  const cell = (row, text, cls) => { const td = document.createElement("td"); td.textContent = text; if (cls) td.className = cls; row.appendChild(td); return td; };
  async function send(path) {
    const headers = { "x-csrf-token": csrf, "content-type": "application/octet-stream" };
    if (path.indexOf("preview") < 0) headers["idempotency-key"] = key;
    const response = await fetch(path + "?name=" + encodeURIComponent(chosen.name), { method: "POST", body: chosen, headers: headers, credentials: "same-origin" });
    return { status: response.status, json: await response.json() };
  }
  document.getElementById("preview-button").addEventListener("click", async function () {
    chosen = input.files && input.files[0];
    if (!chosen) return;
    key = crypto.randomUUID();
    result.textContent = "";
    const answer = await send("/v1/ops/files/preview");
    out.textContent = "";
    if (answer.status !== 200) { out.textContent = answer.json.detail; return; }
    const p = answer.json, v = p.verdicts;
    const summary = document.createElement("p");
    summary.id = "summary";
    summary.textContent = p.name + ": " + (p.status === "would_reject" ? "would be REJECTED" : "would apply") + " — " + v.new + " new, " + v.already_applied + " unchanged, " + v.changed + " changed, " + v.suspect + " suspect, " + v.rejected + " rejected" + (p.correction_of ? " (a correction of " + p.correction_of + ")" : "");
    out.appendChild(summary);
    const table = document.createElement("table");
    table.id = "preview-records";
    const head = table.insertRow(); ["#", "position", "natural key", "verdict", "original amount", "new amount", "detail"].forEach((h) => { const th = document.createElement("th"); th.textContent = h; head.appendChild(th); });
    p.records_listed.forEach(function (r) {
      const row = table.insertRow(); row.className = r.verdict;
      cell(row, String(r.index)); cell(row, r.position); cell(row, r.natural_key || "");
      cell(row, r.verdict === "already_applied" ? "unchanged" : r.verdict);
      cell(row, r.verdict === "changed" ? (r.original_amount || "") : "", "num old-amount");
      cell(row, (r.amount || ""), "num new-amount"); cell(row, r.detail || "");
    });
    (p.errors || []).forEach(function (e) { const row = table.insertRow(); row.className = "rejected"; cell(row, ""); cell(row, e.line != null ? "line " + e.line : (e.xml_path || "")); cell(row, ""); cell(row, "rejected"); cell(row, ""); cell(row, ""); cell(row, e.code + ": " + e.message); });
    const dropped = (p.dropped_records && p.dropped_records.records) || [];
    dropped.forEach(function (d) { const row = table.insertRow(); row.className = "dropped"; cell(row, ""); cell(row, d.position || ""); cell(row, d.natural_key); cell(row, "dropped"); cell(row, (d.amount || ""), "num"); cell(row, ""); cell(row, "in the original, absent from the correction: not reversed automatically"); });
    out.appendChild(table);
    actions.hidden = false;
  });
  document.getElementById("confirm").addEventListener("click", async function () {
    const answer = await send("/v1/ops/files");
    actions.hidden = true;
    result.textContent = answer.status < 300 ? "applied: file " + answer.json.file_id + " — " + JSON.stringify(answer.json.outcomes) : "refused: " + answer.json.detail;
  });
  document.getElementById("cancel").addEventListener("click", function () { out.textContent = ""; actions.hidden = true; result.textContent = "cancelled: nothing was stored"; });
})();
`;
