/**
 * Presents a benchmark: the console table with Node / C++ ratios, the JSON
 * record and the latency-vs-throughput chart (vega-lite rendered to SVG
 * headlessly, no browser).
 */
import type { BenchCase } from './cases.js';
import type { LibraryFacts } from './node-side.js';
import { type RunResult, SIDE_LABELS, type Side, computeUs } from './results.js';

export interface CaseSummary {
  case: BenchCase;
  /** Median of each metric over the rounds, per side. */
  median: Partial<Record<Side, RunResult>>;
  rounds: Partial<Record<Side, RunResult[]>>;
  /** Node / C++ (hop baseline). Throughput and responses/s: higher is
   * better for Node; latency: lower is better for Node. */
  ratios?: { throughput: number; p50: number; p99: number; responsesPerSec?: number };
}

export function ratiosOf(node: RunResult | undefined, cpp: RunResult | undefined): CaseSummary['ratios'] {
  if (node === undefined || cpp === undefined) return undefined;
  const div = (a: number, b: number) => (b > 0 ? a / b : Number.NaN);
  const r: NonNullable<CaseSummary['ratios']> = {
    throughput: div(node.throughput, cpp.throughput),
    p50: div(node.latencyUs.p50, cpp.latencyUs.p50),
    p99: div(node.latencyUs.p99, cpp.latencyUs.p99),
  };
  if (node.responsesPerSec !== undefined && cpp.responsesPerSec !== undefined) {
    r.responsesPerSec = div(node.responsesPerSec, cpp.responsesPerSec);
  }
  return r;
}

function si(value: number): string {
  if (!Number.isFinite(value)) return 'n/a';
  if (value >= 1e6) return `${(value / 1e6).toFixed(2)}M`;
  if (value >= 1e4) return `${(value / 1e3).toFixed(1)}k`;
  if (value >= 1e3) return `${(value / 1e3).toFixed(2)}k`;
  return value.toFixed(1);
}

function micros(value: number): string {
  if (!Number.isFinite(value)) return 'n/a';
  if (value >= 1e4) return `${(value / 1e3).toFixed(1)} ms`;
  return value >= 100 ? value.toFixed(0) : value.toFixed(1);
}

function ratio(value: number | undefined): string {
  return value === undefined || !Number.isFinite(value) ? 'n/a' : `${value.toFixed(2)}x`;
}

function row(cells: string[], widths: number[]): string {
  return cells.map((c, i) => (i < 2 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
}

/** The console table: one line per side, then the ratio line. */
export function formatTable(summaries: CaseSummary[], sides: Side[]): string {
  const header = ['case', 'side', 'req/s', 'resp/s', 'p50 µs', 'p90 µs', 'p99 µs', 'queue µs', 'compute µs'];
  const widths = [20, 18, 9, 9, 9, 9, 9, 9, 10];
  const lines = [row(header, widths), '-'.repeat(widths.reduce((a, b) => a + b + 2, -2))];
  for (const s of summaries) {
    let first = true;
    for (const side of sides) {
      const r = s.median[side];
      const name = first ? s.case.name : '';
      first = false;
      if (r === undefined) {
        lines.push(row([name, SIDE_LABELS[side], 'not run', '', '', '', '', '', ''], widths));
        continue;
      }
      // Decoupled models count per response; show compute per response there.
      const compute =
        r.server.responseComputeUs !== undefined
          ? `${micros(r.server.responseComputeUs)}/resp`
          : micros(computeUs(r.server));
      lines.push(
        row(
          [
            name,
            SIDE_LABELS[side] + (r.errors > 0 ? ` (${r.errors} err)` : ''),
            si(r.throughput),
            r.responsesPerSec === undefined ? '' : si(r.responsesPerSec),
            micros(r.latencyUs.p50),
            micros(r.latencyUs.p90),
            micros(r.latencyUs.p99),
            r.server.responses !== undefined && r.server.requests === 0 ? 'n/a' : micros(r.server.queueUs),
            compute,
          ],
          widths,
        ),
      );
    }
    if (s.ratios !== undefined) {
      const parts = [`throughput ${ratio(s.ratios.throughput)}`];
      if (s.ratios.responsesPerSec !== undefined)
        parts.push(`responses/s ${ratio(s.ratios.responsesPerSec)}`);
      parts.push(`p50 ${ratio(s.ratios.p50)}`, `p99 ${ratio(s.ratios.p99)}`);
      lines.push(`${''.padEnd(widths[0]!)}  ${'node / c++'.padEnd(widths[1]!)}  ${parts.join(', ')}`);
    }
  }
  return lines.join('\n');
}

/**
 * Which library ran, in words: "fake engine", or "real Triton 2.59.0" on CPU
 * or with the GPUs it saw (a record without the facts: the library's file).
 */
export function libraryLabel(facts: LibraryFacts | undefined, library: string): string {
  if (facts === undefined) return library.split('/').pop() ?? library;
  if (facts.isFake) return 'fake engine (triton-node’s stand-in for Triton)';
  const triton = `real Triton ${facts.server.version}`;
  return facts.gpus > 0 ? `${triton}, GPU (${facts.gpus} visible)` : `${triton}, CPU (no GPU visible)`;
}

/** Latency (p50) against throughput, one panel per case family, one line per
 * side through its concurrency levels. */
export async function renderChart(summaries: CaseSummary[], sides: Side[], title: string): Promise<string> {
  const [vega, vegaLite] = await Promise.all([import('vega'), import('vega-lite')]);
  const values = summaries.flatMap((s) =>
    sides.flatMap((side) => {
      const r = s.median[side];
      if (r === undefined) return [];
      return [
        {
          family:
            s.case.kind === 'stream' ? `${s.case.family} (responses/s)` : `${s.case.family} (requests/s)`,
          side: SIDE_LABELS[side],
          concurrency: s.case.concurrency,
          label: `c=${s.case.concurrency}`,
          throughput: s.case.kind === 'stream' ? (r.responsesPerSec ?? 0) : r.throughput,
          p50: r.latencyUs.p50 / 1000,
          p99: r.latencyUs.p99 / 1000,
        },
      ];
    }),
  );
  const encoding = {
    // SI-formatted ticks ("100k", not "100,000"), few of them: the labels fit their panel.
    x: {
      field: 'throughput',
      type: 'quantitative',
      title: 'throughput (/s)',
      scale: { zero: true },
      axis: { format: '~s', tickCount: 4 },
    },
    y: {
      field: 'p50',
      type: 'quantitative',
      title: 'p50 latency (ms, log scale)',
      scale: { type: 'log' },
      axis: { format: '~g', tickCount: 5 },
    },
    color: { field: 'side', type: 'nominal', title: 'side' },
  } as const;
  // Concurrency as the points' size with a legend, not as text beside each point: the two sides'
  // points sit close together at each concurrency, and their labels overlapped.
  const spec = {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: { text: title, fontSize: 14, anchor: 'start' },
    data: { values },
    facet: { column: { field: 'family', type: 'nominal', title: null, header: { labelFontSize: 12 } } },
    spec: {
      width: 260,
      height: 220,
      layer: [
        {
          mark: { type: 'line' },
          encoding: { ...encoding, order: { field: 'concurrency', type: 'quantitative' } },
        },
        {
          mark: { type: 'point', filled: true },
          encoding: {
            ...encoding,
            size: {
              field: 'concurrency',
              type: 'ordinal',
              title: 'concurrency',
              scale: { range: [30, 90, 200, 360] },
            },
            tooltip: [
              { field: 'side', type: 'nominal' },
              { field: 'label', type: 'nominal', title: 'concurrency' },
              { field: 'throughput', type: 'quantitative', format: '.1f' },
              { field: 'p50', type: 'quantitative', format: '.3f', title: 'p50 ms' },
            ],
          },
        },
      ],
    },
    config: {
      axis: { labelFontSize: 11, titleFontSize: 12, labelOverlap: true },
      legend: { labelFontSize: 11 },
    },
    resolve: { scale: { x: 'independent', y: 'independent' } },
  };
  // vega-lite's spec types are a deep union; this literal is checked at
  // compile time of the chart instead (vl.compile throws on a bad spec).
  const compiled = vegaLite.compile(spec as unknown as Parameters<typeof vegaLite.compile>[0]);
  const view = new vega.View(vega.parse(compiled.spec), { renderer: 'none' });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}
