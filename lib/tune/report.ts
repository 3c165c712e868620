/**
 * The tune report: a self-contained HTML page with a throughput-vs-p99 chart
 * of every point (the SLA as a line, the pick marked) and the table, and the
 * text summary the CLI prints. `tuneReportHtml` is public: this comment must
 * not mark the module internal, or stripInternal drops the import below from
 * the declarations and the shipped .d.ts names a type that is not there.
 */
import type { TunePoint, TuneResult } from './index.js';

const escapeHtml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

function label(p: TunePoint): string {
  const batching =
    p.preferredBatchSize === null ? 'no batching' : `pbs ${p.preferredBatchSize}, delay ${p.queueDelayUs} µs`;
  return `${p.instances} inst, ${batching}, c${p.concurrency}`;
}

/** A scatter chart as SVG: x = p99 (ms), y = throughput (/s). */
export function tuneChartSvg(result: TuneResult): string {
  const W = 760;
  const H = 440;
  const m = { left: 70, right: 20, top: 20, bottom: 50 };
  const pts = result.points.filter((p) => Number.isFinite(p.p99Ms));
  const maxX = Math.max(result.slaP99Ms * 1.2, ...pts.map((p) => p.p99Ms)) * 1.05;
  const maxY = Math.max(1, ...pts.map((p) => p.throughput)) * 1.1;
  const x = (v: number) => m.left + (v / maxX) * (W - m.left - m.right);
  const y = (v: number) => H - m.bottom - (v / maxY) * (H - m.top - m.bottom);
  const colors = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b'];
  const instances = [...new Set(pts.map((p) => p.instances))];
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="12">`,
    `<rect width="${W}" height="${H}" fill="white"/>`,
    `<line x1="${m.left}" y1="${H - m.bottom}" x2="${W - m.right}" y2="${H - m.bottom}" stroke="black"/>`,
    `<line x1="${m.left}" y1="${m.top}" x2="${m.left}" y2="${H - m.bottom}" stroke="black"/>`,
  ];
  for (let i = 0; i <= 5; i++) {
    const vx = (maxX * i) / 5;
    const vy = (maxY * i) / 5;
    out.push(
      `<text x="${x(vx)}" y="${H - m.bottom + 16}" text-anchor="middle">${vx.toFixed(vx < 10 ? 1 : 0)}</text>`,
    );
    out.push(`<text x="${m.left - 6}" y="${y(vy) + 4}" text-anchor="end">${vy.toFixed(0)}</text>`);
  }
  out.push(`<text x="${(W + m.left) / 2}" y="${H - 12}" text-anchor="middle">p99 latency (ms)</text>`);
  out.push(
    `<text x="16" y="${(H - m.bottom) / 2}" transform="rotate(-90 16 ${(H - m.bottom) / 2})" text-anchor="middle">throughput (inferences/s)</text>`,
  );
  const sx = x(result.slaP99Ms);
  out.push(
    `<line x1="${sx}" y1="${m.top}" x2="${sx}" y2="${H - m.bottom}" stroke="#d62728" stroke-dasharray="6 4"/>`,
  );
  out.push(`<text x="${sx + 4}" y="${m.top + 12}" fill="#d62728">SLA p99 ${result.slaP99Ms} ms</text>`);
  for (const p of pts) {
    const color = colors[instances.indexOf(p.instances) % colors.length];
    const shape = p.preferredBatchSize === null ? 'rect' : 'circle';
    const cx = x(p.p99Ms);
    const cy = y(p.throughput);
    const title = `<title>${escapeHtml(label(p))}: ${p.throughput.toFixed(1)}/s, p99 ${p.p99Ms.toFixed(2)} ms</title>`;
    out.push(
      shape === 'rect'
        ? `<rect x="${cx - 4}" y="${cy - 4}" width="8" height="8" fill="${color}" fill-opacity="0.7">${title}</rect>`
        : `<circle cx="${cx}" cy="${cy}" r="4.5" fill="${color}" fill-opacity="0.7">${title}</circle>`,
    );
  }
  if (result.best !== undefined) {
    const bx = x(result.best.p99Ms);
    const by = y(result.best.throughput);
    out.push(`<circle cx="${bx}" cy="${by}" r="10" fill="none" stroke="black" stroke-width="2"/>`);
    out.push(`<text x="${bx + 12}" y="${by - 8}">pick: ${escapeHtml(label(result.best))}</text>`);
  }
  instances.forEach((n, i) => {
    out.push(
      `<circle cx="${W - 150}" cy="${m.top + 10 + i * 16}" r="4.5" fill="${colors[i % colors.length]}"/>`,
    );
    out.push(`<text x="${W - 140}" y="${m.top + 14 + i * 16}">${n} instance(s)</text>`);
  });
  out.push(`<text x="${W - 150}" y="${m.top + 14 + instances.length * 16}">■ no batching  ● batching</text>`);
  out.push('</svg>');
  return out.join('\n');
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
      ? '<p><b>No configuration met the SLA.</b></p>'
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
  if (result.best === undefined) lines.push('no configuration met the SLA');
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
