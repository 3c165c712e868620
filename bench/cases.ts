/**
 * Benchmark cases and the option parsing shared by the Node and C++ sides.
 *
 * A case is one closed-loop workload: `concurrency` requests in flight, each
 * resubmitted as soon as its final response has arrived, for a fixed window
 * after a warm-up. The same description drives `model.infer` / `model.stream`
 * in this process and `bench_driver` in a child process.
 */

export type CaseKind = 'infer' | 'stream';

export interface BenchCase {
  /** Unique name, e.g. 'identity-16B-c8'. */
  name: string;
  /** Cases of one family share a chart panel: 'identity-16B', 'square-10k'. */
  family: string;
  kind: CaseKind;
  model: string;
  /** Input tensor name (INPUT0 for identity, IN for square). */
  input: string;
  datatype: string;
  /** Full shape of the input, batch dimension included. */
  shape: number[];
  concurrency: number;
  /** Stream cases: responses asked for per request (square's IN). */
  responses?: number;
}

/** Bytes per element of the fixed-size datatypes the bench can send. */
export const DATATYPE_BYTES: Readonly<Record<string, number>> = {
  BOOL: 1,
  UINT8: 1,
  INT8: 1,
  UINT16: 2,
  INT16: 2,
  FP16: 2,
  BF16: 2,
  UINT32: 4,
  INT32: 4,
  FP32: 4,
  UINT64: 8,
  INT64: 8,
  FP64: 8,
};

export function elementCount(shape: readonly number[]): number {
  return shape.reduce((n, d) => n * d, 1);
}

export function byteSize(c: BenchCase): number {
  return c.kind === 'stream' ? 4 : elementCount(c.shape) * (DATATYPE_BYTES[c.datatype] ?? 0);
}

/** 16 B, 64 MiB, 1.5 KiB: how a payload size reads in a case name. */
export function formatBytes(bytes: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1 && value % 1024 === 0) {
    value /= 1024;
    unit++;
  }
  return `${value}${units[unit]}`;
}

/** The cases of issue 8: identity 16 B at concurrency 1/8/64, identity
 * 64 MiB at 1, square with 10,000 responses per request. */
export function defaultCases(): BenchCase[] {
  const small = [1, 8, 64].map(
    (concurrency): BenchCase => ({
      name: `identity-16B-c${concurrency}`,
      family: 'identity-16B',
      kind: 'infer',
      model: 'identity_fp32',
      input: 'INPUT0',
      datatype: 'FP32',
      shape: [1, 4],
      concurrency,
    }),
  );
  return [
    ...small,
    {
      name: 'identity-64MiB-c1',
      family: 'identity-64MiB',
      kind: 'infer',
      model: 'identity_fp32',
      input: 'INPUT0',
      datatype: 'FP32',
      shape: [1, 16 * 1024 * 1024],
      concurrency: 1,
    },
    {
      name: 'square-10k-c1',
      family: 'square-10k',
      kind: 'stream',
      model: 'square_int32',
      input: 'IN',
      datatype: 'INT32',
      shape: [1],
      concurrency: 1,
      responses: 10000,
    },
  ];
}

/** Cases for `--model M`: one per concurrency, infer, or stream with `--responses`. */
export function modelCases(opts: {
  model: string;
  concurrency: number[];
  shape: number[];
  datatype: string;
  input?: string;
  responses?: number;
}): BenchCase[] {
  const stream = opts.responses !== undefined;
  const family = stream
    ? `${opts.model}-${opts.responses}`
    : `${opts.model}-${formatBytes(elementCount(opts.shape) * (DATATYPE_BYTES[opts.datatype] ?? 0))}`;
  return opts.concurrency.map((concurrency) => ({
    name: `${family}-c${concurrency}`,
    family,
    kind: stream ? 'stream' : 'infer',
    model: opts.model,
    input: opts.input ?? (stream ? 'IN' : 'INPUT0'),
    datatype: stream ? 'INT32' : opts.datatype,
    shape: stream ? [1] : opts.shape,
    concurrency,
    responses: opts.responses,
  }));
}

/** Keeps the cases whose name starts with one of the comma-separated filters. */
export function selectCases(cases: BenchCase[], filter: string | undefined): BenchCase[] {
  if (filter === undefined) return cases;
  const wanted = filter
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
  const chosen = cases.filter((c) => wanted.some((w) => c.name === w || c.name.startsWith(w)));
  if (chosen.length === 0) {
    throw new TypeError(
      `--cases '${filter}' matches none of the cases: ${cases.map((c) => c.name).join(', ')}`,
    );
  }
  return chosen;
}

/** '10s', '500ms', '2m' or a bare number of seconds → seconds. */
export function parseDuration(text: string, option: string): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m)?\s*$/.exec(text);
  if (m === null) {
    throw new TypeError(`Expected a duration like 10s, 500ms or 2m for ${option} but received '${text}'`);
  }
  const value = Number(m[1]);
  const seconds = m[2] === 'ms' ? value / 1000 : m[2] === 'm' ? value * 60 : value;
  if (!(seconds > 0) && option !== '--warmup') {
    throw new TypeError(`Expected a positive duration for ${option} but received '${text}'`);
  }
  return seconds;
}

/** '1,8,64' → [1, 8, 64] (positive integers). */
export function parsePositiveList(text: string, option: string): number[] {
  const parts = text.split(',').map((s) => s.trim());
  const values = parts.map(Number);
  if (parts.length === 0 || values.some((v, i) => parts[i] === '' || !Number.isInteger(v) || v < 1)) {
    throw new TypeError(
      `Expected a comma-separated list of positive integers for ${option} but received '${text}'`,
    );
  }
  return values;
}

/** '1,4' → [1, 4] (integers >= 0). */
export function parseShape(text: string): number[] {
  const parts = text.split(',').map((s) => s.trim());
  const values = parts.map(Number);
  if (values.some((v, i) => parts[i] === '' || !Number.isInteger(v) || v < 0)) {
    throw new TypeError(
      `Expected a comma-separated list of dimensions >= 0 for --shape but received '${text}'`,
    );
  }
  return values;
}
