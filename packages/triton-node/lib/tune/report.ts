/**
 * The tune report: a self-contained HTML page with a throughput-vs-p99 chart
 * of every point (the SLA as a line, the pick marked) and the table, and the
 * text summary the CLI prints. `tuneReportHtml` is public: this comment must
 * not mark the module internal, or stripInternal drops the import below from
 * the declarations and the shipped .d.ts names a type that is not there.
 */
import type { TunePoint, TuneResult } from './types.js';

const escapeHtml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

function label(p: TunePoint): string {
  const batching =
    p.preferredBatchSize === null ? 'no batching' : `pbs ${p.preferredBatchSize}, delay ${p.queueDelayUs} µs`;
  return `${p.instances} inst, ${batching}, c${p.concurrency}`;
}

/**
 * Why no configuration met the SLA, in numbers: the fastest clean point
 * against the SLA ("a single request already took 20.5 ms (p99) against
 * 20 ms"), or the failed requests when no point ran clean. Undefined when a
 * configuration did meet it.
 */
export function noPickReason(result: Pick<TuneResult, 'points' | 'slaP99Ms' | 'best'>): string | undefined {
  if (result.best !== undefined) return undefined;
  const sla = result.slaP99Ms;
  const clean = result.points.filter((p) => p.errors === 0 && Number.isFinite(p.p99Ms));
  if (result.points.length === 0) return 'nothing was measured';
  if (clean.length === 0) {
    const failed = result.points.reduce((n, p) => n + p.errors, 0);
    return `every configuration had failed requests (${failed} in all): fix those first`;
  }
  const ms = (v: number) => `${v.toFixed(v < 10 ? 2 : 1)} ms`;
  // One request at a time without batching: the least any configuration can take.
  const single = clean.find((p) => p.concurrency === 1 && p.preferredBatchSize === null);
  if (single !== undefined && single.p99Ms > sla) {
    return `a single request already took ${ms(single.p99Ms)} (p99) against ${sla} ms: the model is slower than the SLA before any load`;
  }
  const fastest = clean.reduce((a, b) => (b.p99Ms < a.p99Ms ? b : a));
  return `the fastest configuration (${label(fastest)}) took ${ms(fastest.p99Ms)} (p99) against ${sla} ms`;
}

/** An axis: linear, or logarithmic where the values span a decade or more. */
interface Axis {
  log: boolean;
  lo: number;
  hi: number;
  ticks: number[];
  /** 0..1 along the axis. */
  at(v: number): number;
}

function niceStep(span: number, count: number): number {
  const raw = span / count;
  const mag = 10 ** Math.floor(Math.log10(raw));
  return ([1, 2, 5, 10].find((f) => f * mag >= raw) ?? 10) * mag;
}

function axis(values: number[]): Axis {
  const positive = values.filter((v) => v > 0);
  const min = Math.min(...positive);
  const max = Math.max(...positive);
  if (positive.length > 0 && max / min >= 10) {
    const lo = 10 ** Math.floor(Math.log10(min));
    const hi = 10 ** Math.ceil(Math.log10(max));
    const ticks: number[] = [];
    for (let d = lo; d < hi * 1.0001; d *= 10)
      for (const f of [1, 2, 5]) if (f * d <= hi * 1.0001) ticks.push(f * d);
    const decades = Math.log10(hi / lo);
    // Over four decades the 2s and 5s crowd each other: powers of ten only.
    const shown = decades > 4 ? ticks.filter((t) => Math.abs(Math.log10(t) % 1) < 1e-9) : ticks;
    return { log: true, lo, hi, ticks: shown, at: (v) => Math.log10(Math.max(v, lo) / lo) / decades };
  }
  const hiRaw = Math.max(...values, 0) || 1;
  const step = niceStep(hiRaw, 5);
  const hi = Math.ceil((hiRaw * 1.05) / step) * step;
  const ticks = Array.from({ length: Math.round(hi / step) + 1 }, (_, i) => i * step);
  return { log: false, lo: 0, hi, ticks, at: (v) => v / hi };
}

function tickText(v: number): string {
  if (v >= 1000) return `${Number((v / 1000).toPrecision(3))}k`;
  return String(Number(v.toPrecision(3)));
}

/** The chart's plot area and scales. */
interface Plot {
  W: number;
  H: number;
  m: { left: number; right: number; top: number; bottom: number };
  pw: number;
  ph: number;
  ax: Axis;
  ay: Axis;
  x(v: number): number;
  y(v: number): number;
}

const COLORS = ['#1f77b4', '#ff7f0e', '#2ca02c', '#9467bd', '#8c564b', '#e377c2'];

/** The SLA region shaded, its line, and what it says. */
function slaRegion(plot: Plot, sla: number): string[] {
  const { m, pw, ph } = plot;
  const sx = Math.min(plot.x(sla), m.left + pw);
  const slaText = `SLA p99 ${sla} ms`;
  return [
    `<rect x="${m.left}" y="${m.top}" width="${sx - m.left}" height="${ph}" fill="#2ca02c" fill-opacity="0.08"/>`,
    `<line x1="${sx}" y1="${m.top}" x2="${sx}" y2="${m.top + ph}" stroke="#d62728" stroke-width="1.5" stroke-dasharray="6 4"/>`,
    `<text x="${sx - 6}" y="${m.top + 14}" text-anchor="end" fill="#2a7a2a">within the SLA</text>`,
    // The SLA's value right of its line, or left under "within the SLA" when the line is near the edge.
    sx + 12 + slaText.length * 7 > m.left + pw
      ? `<text x="${sx - 6}" y="${m.top + 30}" text-anchor="end" fill="#d62728">${slaText}</text>`
      : `<text x="${sx + 6}" y="${m.top + 14}" fill="#d62728">${slaText}</text>`,
  ];
}

/** Grid lines, tick labels, the frame and the axis titles. */
function axes(plot: Plot): string[] {
  const { m, pw, ph, ax, ay, H } = plot;
  const out: string[] = [];
  for (const t of ax.ticks) {
    out.push(
      `<line x1="${plot.x(t)}" y1="${m.top}" x2="${plot.x(t)}" y2="${m.top + ph}" stroke="#e5e5e5"/>`,
      `<text x="${plot.x(t)}" y="${m.top + ph + 17}" text-anchor="middle">${tickText(t)}</text>`,
    );
  }
  for (const t of ay.ticks) {
    out.push(
      `<line x1="${m.left}" y1="${plot.y(t)}" x2="${m.left + pw}" y2="${plot.y(t)}" stroke="#e5e5e5"/>`,
      `<text x="${m.left - 8}" y="${plot.y(t) + 4}" text-anchor="end">${tickText(t)}</text>`,
    );
  }
  out.push(
    `<rect x="${m.left}" y="${m.top}" width="${pw}" height="${ph}" fill="none" stroke="#333"/>`,
    `<text x="${m.left + pw / 2}" y="${H - 14}" text-anchor="middle">p99 latency (ms${ax.log ? ', log scale' : ''})</text>`,
    `<text x="20" y="${m.top + ph / 2}" transform="rotate(-90 20 ${m.top + ph / 2})" text-anchor="middle">throughput (inferences/s${ay.log ? ', log scale' : ''})</text>`,
  );
  return out;
}

/** A square per point without batching, a circle with; ringed in red over the SLA. */
function marks(plot: Plot, pts: TunePoint[], instances: number[]): string[] {
  return pts.map((p) => {
    const color = COLORS[instances.indexOf(p.instances) % COLORS.length];
    const cx = plot.x(p.p99Ms);
    const cy = plot.y(p.throughput);
    const title = `<title>${escapeHtml(label(p))}: ${p.throughput.toFixed(1)}/s, p99 ${p.p99Ms.toFixed(2)} ms</title>`;
    const stroke = p.meetsSla ? '' : ' stroke="#d62728" stroke-width="1.2"';
    return p.preferredBatchSize === null
      ? `<rect x="${cx - 4.5}" y="${cy - 4.5}" width="9" height="9" fill="${color}" fill-opacity="0.75"${stroke}>${title}</rect>`
      : `<circle cx="${cx}" cy="${cy}" r="5" fill="${color}" fill-opacity="0.75"${stroke}>${title}</circle>`;
  });
}

/** The pick circled and labelled inside the plot, or, without one, the reason across it. */
function verdict(plot: Plot, result: TuneResult): string[] {
  const { m, pw, ph } = plot;
  if (result.best === undefined) {
    return [
      `<rect x="${m.left + 20}" y="${m.top + ph / 2 - 30}" width="${pw - 40}" height="52" fill="white" fill-opacity="0.9" stroke="#d62728"/>`,
      `<text x="${m.left + pw / 2}" y="${m.top + ph / 2 - 10}" text-anchor="middle" font-weight="bold" fill="#d62728">No configuration met the SLA</text>`,
      `<text x="${m.left + pw / 2}" y="${m.top + ph / 2 + 8}" text-anchor="middle" font-size="11">${escapeHtml(noPickReason(result) ?? '')}</text>`,
    ];
  }
  const bx = plot.x(result.best.p99Ms);
  const by = plot.y(result.best.throughput);
  const text = `pick: ${label(result.best)}`;
  const detail = `${result.best.throughput.toFixed(1)}/s, p99 ${result.best.p99Ms.toFixed(1)} ms`;
  // The label goes where it fits inside the plot: right of the point, else left; below when near the top.
  const width = Math.max(text.length, detail.length) * 6.6;
  const left = bx + 14 + width > m.left + pw;
  const tx = left ? bx - 14 : bx + 14;
  const ty = by - 30 < m.top + 20 ? by + 24 : by - 22;
  const anchor = left ? 'end' : 'start';
  return [
    `<circle cx="${bx}" cy="${by}" r="10" fill="none" stroke="black" stroke-width="2"/>`,
    `<line x1="${bx + (left ? -7 : 7)}" y1="${by + (ty > by ? 7 : -7)}" x2="${tx}" y2="${ty + (ty > by ? -12 : 4)}" stroke="black"/>`,
    `<text x="${tx}" y="${ty}" text-anchor="${anchor}" font-weight="bold">${escapeHtml(text)}</text>`,
    `<text x="${tx}" y="${ty + 14}" text-anchor="${anchor}">${escapeHtml(detail)}</text>`,
  ];
}

/** The legend right of the plot: colours per instance count, the shapes, the ring. */
function legend(plot: Plot, instances: number[]): string[] {
  const { m, pw } = plot;
  const lx = m.left + pw + 18;
  const out = [`<text x="${lx}" y="${m.top + 4}" font-weight="bold">instances</text>`];
  instances.forEach((n, i) => {
    out.push(
      `<circle cx="${lx + 5}" cy="${m.top + 20 + i * 18}" r="5" fill="${COLORS[i % COLORS.length]}"/>`,
      `<text x="${lx + 16}" y="${m.top + 24 + i * 18}">${n} instance(s)</text>`,
    );
  });
  const ly = m.top + 40 + instances.length * 18;
  out.push(
    `<rect x="${lx}" y="${ly - 9}" width="9" height="9" fill="#777"/>`,
    `<text x="${lx + 16}" y="${ly}">no batching</text>`,
    `<circle cx="${lx + 5}" cy="${ly + 14}" r="5" fill="#777"/>`,
    `<text x="${lx + 16}" y="${ly + 18}">dynamic batching</text>`,
    `<circle cx="${lx + 5}" cy="${ly + 32}" r="5" fill="none" stroke="#d62728" stroke-width="1.2"/>`,
    `<text x="${lx + 16}" y="${ly + 36}">over the SLA</text>`,
  );
  return out;
}

/**
 * A scatter chart as SVG: x = p99 (ms), y = throughput (/s), each axis
 * logarithmic where its values span a decade or more; the region within the
 * SLA shaded, the pick labelled, and the reason written on the chart when no
 * configuration met the SLA.
 */
export function tuneChartSvg(result: TuneResult): string {
  const W = 860;
  const H = 480;
  const m = { left: 78, right: 190, top: 44, bottom: 56 };
  const pw = W - m.left - m.right;
  const ph = H - m.top - m.bottom;
  const pts = result.points.filter((p) => Number.isFinite(p.p99Ms) && p.p99Ms > 0);
  const ax = axis([...pts.map((p) => p.p99Ms), result.slaP99Ms]);
  const ay = axis(pts.length > 0 ? pts.map((p) => p.throughput) : [1]);
  const plot: Plot = {
    W,
    H,
    m,
    pw,
    ph,
    ax,
    ay,
    x: (v) => m.left + ax.at(v) * pw,
    y: (v) => m.top + ph - ay.at(v) * ph,
  };
  const instances = [...new Set(pts.map((p) => p.instances))].sort((a, b) => a - b);
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="12">`,
    `<rect width="${W}" height="${H}" fill="white"/>`,
    `<text x="${m.left}" y="22" font-size="15" font-weight="bold">${escapeHtml(`tune ${result.model}: throughput against p99 latency`)}</text>`,
    // The region within the SLA, under everything else.
    ...slaRegion(plot, result.slaP99Ms),
    ...axes(plot),
    ...marks(plot, pts, instances),
    ...verdict(plot, result),
    ...legend(plot, instances),
    '</svg>',
  ].join('\n');
}

function row(p: TunePoint): string {
  const cells = [
    p.instances,
    p.preferredBatchSize ?? '—',
    p.preferredBatchSize === null ? '—' : p.queueDelayUs,
    p.concurrency,
    p.throughput.toFixed(1),
    p.p50Ms.toFixed(2),
    p.p90Ms.toFixed(2),
    p.p99Ms.toFixed(2),
    p.queueUs.toFixed(0),
    p.computeUs.toFixed(0),
    p.meanBatchSize.toFixed(2),
    p.errors,
    p.meetsSla ? 'yes' : 'no',
  ];
  return `<tr>${cells.map((c) => `<td>${c}</td>`).join('')}</tr>`;
}

/** The report as one HTML page. */
export function tuneReportHtml(result: TuneResult): string {
  const head = [
    'instances',
    'preferred',
    'delay µs',
    'concurrency',
    'inferences/s',
    'p50 ms',
    'p90 ms',
    'p99 ms',
    'queue µs',
    'compute µs',
    'batch',
    'errors',
    'in SLA',
  ];
  return [
    '<!doctype html>',
    `<html><head><meta charset="utf-8"><title>triton-node tune: ${escapeHtml(result.model)}</title>`,
    '<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 8px;text-align:right}pre{background:#f4f4f4;padding:1em}</style>',
    '</head><body>',
    `<h1>triton-node tune: ${escapeHtml(result.model)}</h1>`,
    `<p>SLA: p99 ≤ ${result.slaP99Ms} ms. ${result.points.length} points, ${result.startedAt} to ${result.finishedAt}.</p>`,
    tuneChartSvg(result),
    result.best === undefined
      ? `<p><b>No configuration met the SLA</b>: ${escapeHtml(noPickReason(result) ?? '')}.</p>`
      : `<h2>Pick</h2><p>${escapeHtml(label(result.best))}: ${result.best.throughput.toFixed(1)} inferences/s, p99 ${result.best.p99Ms.toFixed(2)} ms${
          result.recheck === undefined
            ? ''
            : `; measured again: ${result.recheck.throughput.toFixed(1)}/s, p99 ${result.recheck.p99Ms.toFixed(2)} ms (${result.recheck.meetsSla ? 'within' : 'outside'} the SLA)`
        }.</p><pre>${escapeHtml(result.configText ?? '')}</pre>`,
    '<h2>Every point</h2>',
    `<table><tr>${head.map((h) => `<th>${h}</th>`).join('')}</tr>${result.points.map(row).join('\n')}</table>`,
    '</body></html>',
    '',
  ].join('\n');
}

/** The summary the CLI prints. */
export function tuneSummaryText(result: TuneResult): string {
  const lines = [`tune ${result.model}: ${result.points.length} points, SLA p99 ≤ ${result.slaP99Ms} ms`];
  for (const p of result.points) {
    lines.push(
      `  ${label(p).padEnd(42)} ${p.throughput.toFixed(1).padStart(9)}/s  p99 ${p.p99Ms.toFixed(2).padStart(8)} ms  batch ${p.meanBatchSize.toFixed(2)}${p.meetsSla ? '' : '  (over SLA)'}`,
    );
  }
  if (result.best === undefined) lines.push(`no configuration met the SLA: ${noPickReason(result)}`);
  else {
    lines.push(
      `pick: ${label(result.best)}: ${result.best.throughput.toFixed(1)}/s, p99 ${result.best.p99Ms.toFixed(2)} ms`,
    );
    if (result.recheck !== undefined) {
      lines.push(
        `measured again: ${result.recheck.throughput.toFixed(1)}/s, p99 ${result.recheck.p99Ms.toFixed(2)} ms (${result.recheck.meetsSla ? 'within' : 'outside'} the SLA)`,
      );
    }
  }
  return `${lines.join('\n')}\n`;
}
