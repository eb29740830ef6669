/**
 * Small inline SVG charts for the HTML report: no script, no stylesheet, no font or image to
 * fetch, so the report opens the same with or without a network.
 */

export interface Series {
  readonly name: string;
  readonly points: readonly (readonly [number, number])[];
}

export interface LineChartSpec {
  readonly title: string;
  readonly xLabel: string;
  readonly yLabel: string;
  readonly series: readonly Series[];
  /** Fixed top of the y axis (e.g. 1 for a ratio); otherwise the data's maximum. */
  readonly yMax?: number;
}

export interface BarChartSpec {
  readonly title: string;
  readonly xLabel: string;
  readonly yLabel: string;
  readonly bars: readonly { readonly label: string; readonly value: number }[];
}

const WIDTH = 720;
const HEIGHT = 280;
const PAD = { left: 64, right: 16, top: 32, bottom: 48 } as const;
const PLOT_W = WIDTH - PAD.left - PAD.right;
const PLOT_H = HEIGHT - PAD.top - PAD.bottom;
const COLOURS = ['#1f6fb2', '#d9534f', '#3c9d5d', '#8e6bbf'] as const;

export function escapeXml(text: string): string {
  return text.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);
}

/** A tick label with at most three significant digits and k/M suffixes. */
export function formatNumber(value: number): string {
  const abs = Math.abs(value);
  if (abs >= 1e6) return `${Number((value / 1e6).toPrecision(3))}M`;
  if (abs >= 1e4) return `${Number((value / 1e3).toPrecision(3))}k`;
  return `${Number(value.toPrecision(3))}`;
}

/** 0, step, 2·step, … up to max with a step of 1, 2 or 5 × 10^n. */
function ticks(max: number, count = 5): number[] {
  if (!(max > 0)) return [0];
  const raw = max / count;
  const magnitude = 10 ** Math.floor(Math.log10(raw));
  const step = ([1, 2, 5, 10].find((m) => m * magnitude >= raw) ?? 10) * magnitude;
  const out: number[] = [];
  for (let v = 0; v <= max + step * 1e-9; v += step) out.push(v);
  return out;
}

function frame(title: string, xLabel: string, yLabel: string, yTicks: readonly number[], yTop: number, body: string): string {
  const y = (v: number): number => PAD.top + PLOT_H - (v / yTop) * PLOT_H;
  const grid = yTicks
    .map((t) => `<line x1="${PAD.left}" x2="${PAD.left + PLOT_W}" y1="${y(t).toFixed(1)}" y2="${y(t).toFixed(1)}" class="grid"/><text x="${PAD.left - 6}" y="${(y(t) + 4).toFixed(1)}" class="tick" text-anchor="end">${escapeXml(formatNumber(t))}</text>`)
    .join('');
  return [
    `<svg viewBox="0 0 ${WIDTH} ${HEIGHT}" width="${WIDTH}" height="${HEIGHT}" role="img" aria-label="${escapeXml(title)}">`,
    `<text x="${WIDTH / 2}" y="18" class="title" text-anchor="middle">${escapeXml(title)}</text>`,
    grid,
    `<line x1="${PAD.left}" x2="${PAD.left}" y1="${PAD.top}" y2="${PAD.top + PLOT_H}" class="axis"/>`,
    `<line x1="${PAD.left}" x2="${PAD.left + PLOT_W}" y1="${PAD.top + PLOT_H}" y2="${PAD.top + PLOT_H}" class="axis"/>`,
    body,
    `<text x="${PAD.left + PLOT_W / 2}" y="${HEIGHT - 8}" class="label" text-anchor="middle">${escapeXml(xLabel)}</text>`,
    `<text x="14" y="${PAD.top + PLOT_H / 2}" class="label" text-anchor="middle" transform="rotate(-90 14 ${PAD.top + PLOT_H / 2})">${escapeXml(yLabel)}</text>`,
    '</svg>',
  ].join('');
}

export function lineChart(spec: LineChartSpec): string {
  const all = spec.series.flatMap((s) => s.points);
  if (all.length === 0) return frame(spec.title, spec.xLabel, spec.yLabel, [0], 1, `<text x="${WIDTH / 2}" y="${HEIGHT / 2}" class="label" text-anchor="middle">no data</text>`);
  const xMin = Math.min(...all.map((p) => p[0]));
  const xMax = Math.max(...all.map((p) => p[0]));
  const yTicks = ticks(spec.yMax ?? Math.max(...all.map((p) => p[1])));
  const yTop = Math.max(spec.yMax ?? 0, yTicks.at(-1) ?? 1) || 1;
  const x = (v: number): number => PAD.left + (xMax === xMin ? PLOT_W / 2 : ((v - xMin) / (xMax - xMin)) * PLOT_W);
  const y = (v: number): number => PAD.top + PLOT_H - (v / yTop) * PLOT_H;
  const xTicks = ticks(xMax - xMin).map((t) => t + xMin);
  const xAxis = xTicks.map((t) => `<text x="${x(t).toFixed(1)}" y="${PAD.top + PLOT_H + 16}" class="tick" text-anchor="middle">${escapeXml(formatNumber(t))}</text>`).join('');
  const lines = spec.series
    .map((s, i) => {
      const colour = COLOURS[i % COLOURS.length] ?? '#000';
      const path = s.points.map((p) => `${x(p[0]).toFixed(1)},${y(p[1]).toFixed(1)}`).join(' ');
      const legend = `<rect x="${PAD.left + 8 + i * 130}" y="${PAD.top - 12}" width="10" height="10" fill="${colour}"/><text x="${PAD.left + 22 + i * 130}" y="${PAD.top - 3}" class="tick">${escapeXml(s.name)}</text>`;
      return `<polyline points="${path}" fill="none" stroke="${colour}" stroke-width="1.8"/>${legend}`;
    })
    .join('');
  return frame(spec.title, spec.xLabel, spec.yLabel, yTicks, yTop, xAxis + lines);
}

export function barChart(spec: BarChartSpec): string {
  if (spec.bars.length === 0) return frame(spec.title, spec.xLabel, spec.yLabel, [0], 1, `<text x="${WIDTH / 2}" y="${HEIGHT / 2}" class="label" text-anchor="middle">no data</text>`);
  const yTicks = ticks(Math.max(...spec.bars.map((b) => b.value)));
  const yTop = yTicks.at(-1) ?? 1;
  const slot = PLOT_W / spec.bars.length;
  const labelEvery = Math.ceil(spec.bars.length / 10);
  const body = spec.bars
    .map((b, i) => {
      const h = (b.value / (yTop || 1)) * PLOT_H;
      const x = PAD.left + i * slot;
      const label = i % labelEvery === 0 ? `<text x="${(x + slot / 2).toFixed(1)}" y="${PAD.top + PLOT_H + 16}" class="tick" text-anchor="middle">${escapeXml(b.label)}</text>` : '';
      return `<rect x="${(x + 1).toFixed(1)}" y="${(PAD.top + PLOT_H - h).toFixed(1)}" width="${Math.max(1, slot - 2).toFixed(1)}" height="${h.toFixed(1)}" fill="${COLOURS[0]}"><title>${escapeXml(`${b.label}: ${b.value}`)}</title></rect>${label}`;
    })
    .join('');
  return frame(spec.title, spec.xLabel, spec.yLabel, yTicks, yTop, body);
}
