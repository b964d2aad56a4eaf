/**
 * The reconciliation page's one script, inline: POST the chosen statement's bytes to the import
 * route with the session's CSRF token and one Idempotency-Key per chosen file (a second click is
 * the same import), and show what was imported. Text goes in through textContent only.
 */
export const reconImportScript = String.raw`
(function () {
  const csrf = document.body.dataset.csrf;
  const input = document.getElementById("statement");
  const result = document.getElementById("import-result");
  let key = null;
  input.addEventListener("change", function () {
    key = crypto.randomUUID(); result.textContent = "";
  });
  document.getElementById("import-form").addEventListener("submit", async function (event) {
    event.preventDefault();
    const chosen = input.files && input.files[0];
    if (!chosen) { result.textContent = "choose a statement file first"; return; }
    if (!key) key = crypto.randomUUID();
    const account = document.getElementById("import-account").value;
    const format = document.getElementById("import-format").value;
    const query = "?account=" + encodeURIComponent(account) +
      "&name=" + encodeURIComponent(chosen.name) +
      (format ? "&format=" + encodeURIComponent(format) : "");
    const headers = { "x-csrf-token": csrf, "idempotency-key": key,
      "content-type": "application/octet-stream" };
    const response = await fetch("/console/reconciliation/imports" + query,
      { method: "POST", body: chosen, credentials: "same-origin", headers: headers });
    const answer = await response.json();
    result.dataset.status = String(response.status);
    result.textContent = response.status < 300 ? answer.message : "refused: " + answer.detail;
  });
})();
`;
