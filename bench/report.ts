/**
 * Presents a benchmark: the console table with Node / C++ ratios, the JSON
 * record and the latency-vs-throughput chart (vega-lite rendered to SVG
 * headlessly, no browser).
 */
import type { BenchCase } from './cases.js';
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
          p50: r.latencyUs.p50,
          p99: r.latencyUs.p99,
        },
      ];
    }),
  );
  const encoding = {
    x: { field: 'throughput', type: 'quantitative', title: 'throughput', scale: { zero: true } },
    y: { field: 'p50', type: 'quantitative', title: 'p50 latency (µs)', scale: { type: 'log' } },
    color: { field: 'side', type: 'nominal', title: 'side' },
  } as const;
  const spec = {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title,
    data: { values },
    facet: { column: { field: 'family', type: 'nominal', title: null } },
    spec: {
      width: 260,
      height: 220,
      layer: [
        {
          mark: { type: 'line', point: { size: 60 } },
          encoding: { ...encoding, order: { field: 'concurrency', type: 'quantitative' } },
        },
        {
          mark: { type: 'text', align: 'left', dx: 6, dy: -6, fontSize: 10 },
          encoding: { ...encoding, text: { field: 'label', type: 'nominal' } },
        },
      ],
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
