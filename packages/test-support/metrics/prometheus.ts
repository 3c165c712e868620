// Reading Prometheus text in tests, with the parse-prometheus-text-format
// package doing the parsing. The package folds every series of a labelled
// histogram into one (losing labels, _count and _sum), so samples are also
// read one line at a time through the same parser, where that cannot happen.
import parsePrometheusTextFormat, { type PrometheusFamily } from 'parse-prometheus-text-format';
import { expect } from 'vitest';

/** Parses a whole exposition; also checks that no family is declared twice. */
export function parseExposition(text: string): PrometheusFamily[] {
  const families = parsePrometheusTextFormat(text);
  const typed = [...text.matchAll(/^# TYPE (\S+) /gm)].map((m) => m[1]);
  expect(new Set(typed).size).toBe(typed.length);
  return families;
}

export function findFamily(families: PrometheusFamily[], name: string): PrometheusFamily | undefined {
  return families.find((f) => f.name === name);
}

interface Sample {
  labels: Record<string, string>;
  value: number;
}

/** Every sample line of `sampleName` (e.g. 'x_bucket'), each parsed on its own. */
export function samples(text: string, sampleName: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${sampleName}{`) && !line.startsWith(`${sampleName} `)) continue;
    const [family] = parsePrometheusTextFormat(`${line}\n`);
    const metric = family?.metrics[0];
    if (family?.name !== sampleName || metric?.value === undefined)
      throw new Error(`unparsed sample: ${line}`);
    const v = metric.value;
    out.push({
      labels: metric.labels ?? {},
      value: v === '+Inf' ? Number.POSITIVE_INFINITY : v === '-Inf' ? Number.NEGATIVE_INFINITY : Number(v),
    });
  }
  return out;
}

function sameLabels(a: Record<string, string>, b: Record<string, string>): boolean {
  const ka = Object.keys(a);
  return ka.length === Object.keys(b).length && ka.every((k) => a[k] === b[k]);
}

/** The value of the sample of `sampleName` with exactly `labels`, if there is one. */
export function sampleValue(
  text: string,
  sampleName: string,
  labels: Record<string, string>,
): number | undefined {
  return samples(text, sampleName).find((s) => sameLabels(s.labels, labels))?.value;
}

export interface HistogramSeries {
  count: number;
  sum: number;
  /** [upper bound, cumulative count], ascending, +Inf last. */
  buckets: Array<[number, number]>;
}

/** One series of histogram `name` with exactly `labels` (besides `le`). */
export function histogramSeries(
  text: string,
  name: string,
  labels: Record<string, string>,
): HistogramSeries | undefined {
  const count = sampleValue(text, `${name}_count`, labels);
  const sum = sampleValue(text, `${name}_sum`, labels);
  if (count === undefined || sum === undefined) return undefined;
  const buckets = samples(text, `${name}_bucket`)
    .filter((s) => {
      const { le: _le, ...rest } = s.labels;
      return s.labels.le !== undefined && sameLabels(rest, labels);
    })
    .map((s): [number, number] => [
      s.labels.le === '+Inf' ? Number.POSITIVE_INFINITY : Number(s.labels.le),
      s.value,
    ])
    .sort((x, y) => x[0] - y[0]);
  return { count, sum, buckets };
}
