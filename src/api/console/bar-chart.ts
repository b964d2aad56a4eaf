import { html, type Html } from "./html.ts";

/** One series of a bar chart: its name, its colour and a value per category, as shown. */
export interface ChartSeries {
  name: string;
  color: string;
  /** Per category, the value as people read it ("3", "2105.00"): drawn by its number. */
  values: readonly string[];
}

export interface BarChartData {
  id: string;               // the figure's id; the SVG is `${id}-svg`, the table `${id}-table`
  caption: string;
  categoryName: string;     // the table's first column: "day", "age", "hour"
  categories: readonly string[];
  series: readonly ChartSeries[];
}

const PLOT = { height: 140, barWidth: 32, gap: 10, left: 4, labelHeight: 16 } as const;

/** The value range the bars span: from the most negative stack to the highest, zero included. */
function extent(data: BarChartData): { low: number; high: number } {
  let low = 0;
  let high = 0;
  data.categories.forEach((_, index) => {
    let up = 0;
    let down = 0;
    for (const s of data.series) {
      const value = Number(s.values[index] ?? "0");
      if (value >= 0) up += value;
      else down += value;
    }
    high = Math.max(high, up);
    low = Math.min(low, down);
  });
  return { low, high: high === low ? low + 1 : high };
}

/** A category as its axis label: a date by month and day (the table has the whole date). */
function labelOf(category: string): string {
  return /^\d{4}-\d{2}-\d{2}$/.test(category) ? category.slice(5) : category;
}

/** The width each category takes: its bar and gap, or its label's, if that is wider. */
function slotWidthOf(data: BarChartData): number {
  const labelChars = Math.max(0, ...data.categories.map((c) => labelOf(c).length));
  return Math.max(PLOT.barWidth + PLOT.gap, labelChars * 6 + 8);
}

/** Each category's bars, stacked per sign from the zero line; every rect names its value. */
function bars(data: BarChartData): Html[] {
  const { low, high } = extent(data);
  const scale = PLOT.height / (high - low);
  const zeroY = Math.round(high * scale);
  const slot = slotWidthOf(data);
  return data.categories.map((category, index) => {
    const x = PLOT.left + index * slot;
    let up = zeroY;
    let down = zeroY;
    const rects = data.series.map((s) => {
      const text = s.values[index] ?? "0";
      const h = Math.round(Math.abs(Number(text)) * scale);
      const y = Number(text) >= 0 ? (up -= h) : down;
      if (Number(text) < 0) down += h;
      return html`<rect x="${x}" y="${y}" width="${PLOT.barWidth}" height="${h}" fill="${s.color}"
        data-category="${category}" data-series="${s.name}" data-value="${text}">
        <title>${category} ${s.name}: ${text}</title></rect>`;
    });
    const label = html`<text x="${x}" y="${PLOT.height + 12}" font-size="10">
      ${labelOf(category)}</text>`;
    return html`${rects}${label}`;
  });
}

/**
 * A bar chart drawn on the server as SVG (no script, no chart library), stacked when it has
 * several series, with its numbers as a table beside it: the table is what a screen reader reads
 * (the SVG is hidden from it), and it holds exactly the values the bars are drawn from.
 */
export function barChart(data: BarChartData): Html {
  const width = Math.max(360, PLOT.left + data.categories.length * slotWidthOf(data));
  const keys = data.series.map((s, i) => html`<rect x="${i * 90}" y="0" width="10" height="10"
    fill="${s.color}"></rect><text x="${i * 90 + 14}" y="10" font-size="11">${s.name}</text>`);
  const legend = data.series.length < 2
    ? html``
    : html`<g transform="translate(0,${PLOT.height + 20})">${keys}</g>`;
  const head = html`<tr><th scope="col">${data.categoryName}</th>${
    data.series.map((s) => html`<th scope="col">${s.name}</th>`)}</tr>`;
  const cell = (s: ChartSeries, index: number) =>
    html`<td class="num" data-series="${s.name}">${s.values[index] ?? "0"}</td>`;
  const rows = data.categories.map((category, index) =>
    html`<tr><th scope="row">${category}</th>${data.series.map((s) => cell(s, index))}</tr>`);
  if (data.categories.length === 0) {
    return html`<figure id="${data.id}"><figcaption>${data.caption}</figcaption>
      <p class="note">nothing to show yet</p></figure>`;
  }
  return html`<figure id="${data.id}"><figcaption>${data.caption}</figcaption>
    <svg id="${data.id}-svg" width="${width}" height="${PLOT.height + 40}"
      viewBox="0 0 ${width} ${PLOT.height + 40}" aria-hidden="true" focusable="false">
      ${bars(data)}${legend}</svg>
    <table id="${data.id}-table" class="chart-numbers">
      <caption>${data.caption}: the numbers</caption>
      ${head}${rows}</table></figure>`;
}
