import type { FileReport } from "../../files/report.ts";
import { html, type Html } from "./html.ts";

const colors: Record<string, string> = { done: "#2a9d8f", rejected: "#e63946", processing: "#e9c46a", received: "#8d99ae" };

/** Files received per day by status, as an inline SVG stacked bar chart (no chart library, no network). */
export function filesPerDayChart(files: readonly FileReport[]): Html {
  const days = new Map<string, Map<string, number>>();
  for (const file of files) {
    const day = file.received_at.slice(0, 10);
    const counts = days.get(day) ?? new Map<string, number>();
    counts.set(file.status, (counts.get(file.status) ?? 0) + 1);
    days.set(day, counts);
  }
  const ordered = [...days].sort(([a], [b]) => (a < b ? -1 : 1)).slice(-14);
  const most = Math.max(1, ...ordered.map(([, counts]) => [...counts.values()].reduce((a, b) => a + b, 0)));
  const barWidth = 36;
  const height = 120;
  const bars = ordered.map(([day, counts], index) => {
    let y = height;
    const parts = [...counts].map(([status, n]) => {
      const h = Math.round((n / most) * (height - 20));
      y -= h;
      return html`<rect x="${index * (barWidth + 8) + 4}" y="${y}" width="${barWidth}" height="${h}" fill="${colors[status] ?? "#999"}"><title>${day} ${status}: ${n}</title></rect>`;
    });
    return html`${parts}<text x="${index * (barWidth + 8) + 4}" y="${height + 14}" font-size="10">${day.slice(5)}</text>`;
  });
  const legend = Object.entries(colors).map(([status, color], index) => html`<rect x="${index * 90}" y="0" width="10" height="10" fill="${color}"></rect><text x="${index * 90 + 14}" y="10" font-size="11">${status}</text>`);
  return html`<figure><figcaption>Files received per day, by status</figcaption>
    <svg id="files-per-day" width="${Math.max(360, ordered.length * (barWidth + 8) + 8)}" height="${height + 40}" role="img" aria-label="files per day by status">
    <g transform="translate(0,0)">${bars}</g><g transform="translate(0,${height + 22})">${legend}</g></svg></figure>`;
}

/** Balance delta rows committed but not yet folded into balances, as a bar against a scale of `scaleRowsMax`. */
export function projectionLagChart(lagRows: number, scaleRowsMax: number): Html {
  const width = 360;
  const filled = Math.min(width, Math.round((lagRows / Math.max(1, scaleRowsMax)) * width));
  return html`<figure><figcaption>Projection lag: <span id="projection-lag">${lagRows}</span> balance delta rows not yet folded</figcaption>
    <svg id="projection-lag-chart" width="${width}" height="24" role="img" aria-label="projection lag"><rect x="0" y="4" width="${width}" height="16" fill="#eee"></rect>
    <rect x="0" y="4" width="${filled}" height="16" fill="${lagRows > scaleRowsMax / 2 ? "#e63946" : "#2a9d8f"}"><title>${lagRows} rows</title></rect></svg></figure>`;
}

/** Age of the oldest undelivered outbox message (service-wide, as /metrics exports it), as a bar against `scaleSeconds`. */
export function outboxLagChart(ageSeconds: number, scaleSeconds: number): Html {
  const width = 360;
  const seconds = Math.round(ageSeconds);
  const filled = Math.min(width, Math.round((seconds / Math.max(1, scaleSeconds)) * width));
  return html`<figure><figcaption>Outbox lag: the oldest undelivered message is <span id="outbox-lag">${seconds}</span> s old</figcaption>
    <svg id="outbox-lag-chart" width="${width}" height="24" role="img" aria-label="outbox lag"><rect x="0" y="4" width="${width}" height="16" fill="#eee"></rect>
    <rect x="0" y="4" width="${filled}" height="16" fill="${seconds > scaleSeconds / 2 ? "#e63946" : "#2a9d8f"}"><title>${seconds} s</title></rect></svg></figure>`;
}

// The outbox lag bar's scale: ten minutes fill it. A healthy relay delivers within seconds; a
// dead receiver's messages back off for hours (outbox backoffCapMs), so a full bar means look now.
export const OUTBOX_LAG_SCALE_SECONDS = 600;
