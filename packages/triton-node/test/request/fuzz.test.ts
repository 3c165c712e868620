/**
 * Property-based fuzzing of the request surface (issue 12): whatever a caller
 * passes to infer() and stream(), each call either resolves with the right
 * result or rejects with a TritonError, TypeError or RangeError whose message
 * names what was wrong; it never crashes the process (this file runs in a
 * forked vitest worker: a crash fails it), never leaves a Promise pending,
 * and leaves no live request, response or buffer behind.
 *
 * Seeded: the seed is printed, and FUZZ_SEED replays a run (FUZZ_SCALE
 * multiplies the number of cases). Recipes and what they must do are in
 * test/request/fuzz-requests.ts.
 */
import { spawnSync } from 'node:child_process';
import { getEventListeners } from 'node:events';
import { openSync, writeSync } from 'node:fs';
import {
  FIXTURES,
  LIBRARY_PATH,
  MODELS,
  collectGarbage,
  eventually,
  library,
  useServer,
} from '@triton-node/test-support/helpers.js';
import {
  type BuiltCall,
  type CallRecipe,
  type ExpectedResponse,
  type ExpectedTensor,
  FUZZ_MODEL_NAMES,
  anyCallArb,
  bigintSafe,
  buildCall,
  describeValue,
} from '@triton-node/test-support/request/fuzz-requests.js';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { addon } from '../../lib/addon/load.js';
import {
  type InferResult,
  type InferStream,
  type Server,
  type Tensor,
  TritonError,
} from '../../lib/index.js';
import { fakeEngine } from '../../lib/testing.js';

const SEED = process.env.FUZZ_SEED === undefined ? 20261201 : Number(process.env.FUZZ_SEED);
const SCALE = process.env.FUZZ_SCALE === undefined ? 1 : Number(process.env.FUZZ_SCALE);
/** FUZZ_LOG=file: each case is written there before it runs, so a crash that kills the worker still shows it. */
const LOG = process.env.FUZZ_LOG === undefined ? undefined : openSync(process.env.FUZZ_LOG, 'w');

function logCase(what: string, value: unknown): void {
  if (LOG !== undefined) writeSync(LOG, `${what} ${JSON.stringify(value, bigintSafe)}\n`);
}

/** A call still pending after this long is a hung Promise (generous: CI machines are slow). */
const HANG_MS = 30_000;

const runs = (n: number) => Math.max(1, Math.round(n * SCALE));

const server = useServer(FUZZ_MODEL_NAMES, { exitTimeoutSeconds: 10 });

let baseline: { outputBuffers: number; liveOutputBuffers: number } | undefined;

beforeAll(async () => {
  if (!Number.isSafeInteger(SEED))
    throw new TypeError(`FUZZ_SEED must be an integer, got ${process.env.FUZZ_SEED}`);
  console.log(`fuzz: seed ${SEED} (set FUZZ_SEED to replay), scale ${SCALE}, library ${library().path}`);
  // Warm up so lazily created, long-lived objects are in the baseline.
  await server().infer('identity_nobatch', { inputs: { INPUT0: new Float32Array([1]) } });
  await collectGarbage();
  baseline = {
    outputBuffers: fakeEngine.liveObjects()?.outputBuffers ?? 0,
    liveOutputBuffers: addon().addonStats().liveOutputBuffers,
  };
});

// ---- running one call -----------------------------------------------------------

type Outcome =
  | { kind: 'resolved'; responses: InferResult[]; complete: boolean }
  | { kind: 'rejected'; error: unknown; sync: boolean; responses: InferResult[] }
  | { kind: 'hung' };

async function consume(stream: InferStream, recipe: CallRecipe): Promise<Outcome> {
  const responses: InferResult[] = [];
  const c = recipe.consume;
  try {
    if (c.kind === 'returnAtOnce') {
      await stream.return();
      for await (const r of stream) responses.push(r);
      return { kind: 'resolved', responses, complete: false };
    }
    for await (const r of stream) {
      if (c.kind === 'break' && responses.length >= c.after) break;
      responses.push(r);
      if (c.kind === 'slow') await new Promise((resolve) => setImmediate(resolve));
    }
    return { kind: 'resolved', responses, complete: c.kind !== 'break' || responses.length < c.after };
  } catch (error) {
    return { kind: 'rejected', error, sync: false, responses };
  }
}

/** Makes the call as the recipe says; a synchronous throw is allowed from server.model() and stream() only. */
function start(srv: Server, call: BuiltCall): Promise<Outcome> {
  const r = call.recipe;
  const rejectedSync = (error: unknown): Promise<Outcome> =>
    Promise.resolve({ kind: 'rejected', error, sync: true, responses: [] });
  const single = (p: Promise<InferResult>): Promise<Outcome> =>
    p.then(
      (result): Outcome => ({ kind: 'resolved', responses: [result], complete: true }),
      (error): Outcome => ({ kind: 'rejected', error, sync: false, responses: [] }),
    );
  const name = call.modelName as string;
  const request = call.request as Parameters<Server['infer']>[1];
  if (r.via === 'infer') return single(srv.infer(name, request));
  let handle: ReturnType<Server['model']> | undefined;
  if (r.via === 'modelInfer' || r.versionOn === 'handle') {
    try {
      handle = srv.model(name, call.handleVersion as number);
    } catch (error) {
      return rejectedSync(error);
    }
  }
  if (r.via === 'modelInfer') return single(handle!.infer(request));
  let stream: InferStream;
  try {
    const options = call.streamOptions as Parameters<Server['stream']>[2];
    stream = handle === undefined ? srv.stream(name, request, options) : handle.stream(request, options);
  } catch (error) {
    return rejectedSync(error);
  }
  return consume(stream, r);
}

async function run(srv: Server, call: BuiltCall): Promise<Outcome> {
  let outcome: Promise<Outcome>;
  try {
    outcome = start(srv, call);
  } catch (error) {
    throw new Error(`${call.recipe.via} threw synchronously instead of rejecting: ${String(error)}`);
  }
  call.abortLater?.();
  let timer: NodeJS.Timeout | undefined;
  const hung = new Promise<Outcome>((resolve) => {
    timer = setTimeout(() => resolve({ kind: 'hung' }), HANG_MS);
  });
  try {
    return await Promise.race([outcome, hung]);
  } finally {
    clearTimeout(timer);
  }
}

// ---- judging the outcome --------------------------------------------------------

function bytesOf(view: ArrayBufferView, length = view.byteLength): Uint8Array {
  return new Uint8Array(view.buffer, view.byteOffset, Math.min(length, view.byteLength));
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.byteLength === b.byteLength && Buffer.compare(Buffer.from(a), Buffer.from(b)) === 0;
}

function checkTensor(t: Tensor | undefined, e: ExpectedTensor): string | undefined {
  if (t === undefined) return `output ${e.name} missing`;
  if (t.datatype !== e.datatype) return `${e.name}: datatype ${t.datatype}, expected ${e.datatype}`;
  if (JSON.stringify(t.shape) !== JSON.stringify(e.shape)) {
    return `${e.name}: shape [${t.shape}], expected [${e.shape}]`;
  }
  if (t.memoryType !== 'cpu') return undefined; // pinned/GPU placement (a CUDA machine): shape and type only
  if (e.elements !== undefined) {
    const data = t.data as Buffer[];
    if (!Array.isArray(data)) return `${e.name}: BYTES data is a ${describeValue(data)}`;
    if (data.length !== e.elements.length)
      return `${e.name}: ${data.length} elements, expected ${e.elements.length}`;
    for (let i = 0; i < data.length; i++) {
      if (!sameBytes(data[i]!, e.elements[i]!)) return `${e.name}[${i}] differs`;
    }
  } else {
    const data = t.data as ArrayBufferView;
    if (!ArrayBuffer.isView(data)) return `${e.name}: data is ${describeValue(data)}`;
    if (!sameBytes(bytesOf(data), e.bytes!)) return `${e.name}: bytes differ from the input's`;
  }
  const into = e.into;
  if (into !== undefined) {
    const expectedBytes = e.elements !== undefined ? encodedBytes(e.elements) : e.bytes!;
    if (!sameBytes(bytesOf(into.view, expectedBytes.byteLength), expectedBytes)) {
      return `${e.name}: the output was not written into the caller's destination`;
    }
    // BYTES data is a list of Buffers over the destination, never the destination itself.
    if (into.exact && into.sameType && e.elements === undefined && t.data !== into.view) {
      return `${e.name}: result.data is not the caller's destination (a ${describeValue(t.data)})`;
    }
  }
  return undefined;
}

function encodedBytes(elements: Uint8Array[]): Uint8Array {
  const parts: Uint8Array[] = [];
  for (const e of elements) {
    const len = new Uint8Array(4);
    new DataView(len.buffer).setUint32(0, e.byteLength, true);
    parts.push(len, e);
  }
  return Buffer.concat(parts);
}

function checkResponse(
  result: InferResult,
  e: ExpectedResponse,
  call: BuiltCall,
  index: number,
): string | undefined {
  const at = `response ${index}`;
  if (result.model !== call.expectedModel) return `${at}: model ${result.model}`;
  if (result.version !== call.expectedVersion)
    return `${at}: version ${result.version}, expected ${call.expectedVersion}`;
  if (result.id !== (call.expectedId ?? '')) {
    return `${at}: id ${JSON.stringify(result.id)}, expected ${JSON.stringify(call.expectedId ?? '')}`;
  }
  const got = Object.keys(result.outputs).sort();
  const want = [...e.outputs.keys()].sort();
  const unexpected = got.filter((n) => !e.outputs.has(n) && !e.optional.has(n));
  const lacking = want.filter((n) => !(n in result.outputs) && !e.optional.has(n));
  if (unexpected.length > 0 || lacking.length > 0) return `${at}: outputs [${got}], expected [${want}]`;
  for (const [name, tensor] of e.outputs) {
    if (!(name in result.outputs) && e.optional.has(name)) continue;
    const problem = checkTensor(result.outputs[name], tensor);
    if (problem !== undefined) return `${at}: ${problem}`;
  }
  if (call.timing && call.recipe.via !== 'stream' && result.timing === undefined) return `${at}: no timing`;
  return undefined;
}

/** After dispose(), a BYTES output either still reads right (small outputs are plain JS memory) or refuses. */
function checkAfterDispose(result: InferResult, e: ExpectedResponse): string | undefined {
  result.dispose();
  result.dispose();
  for (const [name, tensor] of e.outputs) {
    const t = result.outputs[name];
    if (t === undefined || tensor.elements === undefined || t.memoryType !== 'cpu') continue;
    let strings: string[];
    try {
      strings = t.strings();
    } catch (err) {
      const message = (err as Error).message ?? '';
      if (!(err instanceof Error) || !(message.includes(name) || /dispos/i.test(message))) {
        return `${name}.strings() after dispose threw without naming the tensor: ${String(err)}`;
      }
      continue;
    }
    const want = tensor.elements.map((b) => Buffer.from(b).toString('utf8'));
    if (JSON.stringify(strings) !== JSON.stringify(want)) {
      return `${name}.strings() after dispose returned ${JSON.stringify(strings).slice(0, 80)} instead of the data or an error`;
    }
  }
  return undefined;
}

function judgeError(error: unknown, call: BuiltCall, sync: boolean): string | undefined {
  const e = error as Error;
  if (!(error instanceof TritonError || error instanceof TypeError || error instanceof RangeError)) {
    return `rejected with ${describeValue(e?.name)} (not TritonError/TypeError/RangeError): ${String(e?.message ?? error)}`;
  }
  const code = error instanceof TritonError ? ` ${error.code}` : '';
  if (call.faults.length === 0) return `a valid request was refused: ${e.name}${code}: ${e.message}`;
  if (sync && error instanceof TritonError) {
    return `threw a ${e.name} synchronously: ${e.message}`;
  }
  const message = e.message.toLowerCase();
  const named = call.faults.some((f) => f.names.some((n) => n !== '' && message.includes(n.toLowerCase())));
  if (!named) {
    const faults = call.faults.map((f) => `${f.why} (${f.names.join(' | ')})`).join('; ');
    return `the ${e.name}${code} names none of the faults [${faults}]: ${JSON.stringify(e.message)}`;
  }
  if (e.name === 'AbortError' && (error as TritonError).code !== 'CANCELLED')
    return 'an AbortError not CANCELLED';
  return undefined;
}

function judge(outcome: Outcome, call: BuiltCall): string | undefined {
  if (outcome.kind === 'hung') return `no answer within ${HANG_MS} ms (a hung Promise)`;
  const hardFaults = call.faults.filter((f) => f.hard);
  const expected = call.expected ?? [];
  // Responses that arrived before an error, or before the consumer stopped, must be right too.
  for (let i = 0; i < outcome.responses.length && i < expected.length; i++) {
    const problem = checkResponse(outcome.responses[i]!, expected[i]!, call, i);
    if (problem !== undefined) return problem;
  }
  if (outcome.kind === 'rejected') return judgeError(outcome.error, call, outcome.sync);
  if (call.recipe.via === 'stream' && call.recipe.consume.kind === 'returnAtOnce') {
    // The consumer gave up before the request was sent: nothing to see, and nothing may come.
    return outcome.responses.length === 0
      ? undefined
      : `${outcome.responses.length} responses after return()`;
  }
  if (hardFaults.length > 0) {
    return `resolved despite ${hardFaults.map((f) => f.why).join('; ')}`;
  }
  if (outcome.complete && outcome.responses.length !== expected.length) {
    return `${outcome.responses.length} responses, expected ${expected.length}`;
  }
  if (outcome.responses.length > expected.length)
    return `${outcome.responses.length} responses, expected ${expected.length}`;
  if (call.recipe.disposeAfter) {
    for (let i = 0; i < outcome.responses.length; i++) {
      const problem = checkAfterDispose(outcome.responses[i]!, expected[i]!);
      if (problem !== undefined) return problem;
    }
  }
  return undefined;
}

/** A long-lived signal keeps no listener of a settled request. */
function listenersLeft(call: BuiltCall): string | undefined {
  const s = call.signal;
  if (s === undefined || s.aborted) return undefined;
  const n = getEventListeners(s, 'abort').length;
  return n === 0 ? undefined : `${n} abort listener(s) left on the request's signal after it settled`;
}

/** How the calls of one property ended, printed after it (a property whose calls all fail early proves little). */
const tally = new Map<string, number>();

function count(outcome: Outcome, call: BuiltCall): void {
  let key: string;
  if (outcome.kind === 'hung') key = 'hung';
  else if (outcome.kind === 'resolved')
    key = `resolved (${call.faults.length === 0 ? 'valid' : 'soft faults'})`;
  else {
    const e = outcome.error as TritonError;
    key = `rejected ${e?.name ?? typeof e}${e instanceof TritonError ? ` ${e.code}` : ''}`;
  }
  tally.set(key, (tally.get(key) ?? 0) + 1);
}

function printTally(what: string): void {
  const parts = [...tally].sort((a, b) => b[1] - a[1]).map(([k, n]) => `${k}: ${n}`);
  console.log(`fuzz: ${what}: ${parts.join(', ')}`);
  tally.clear();
}

async function check(calls: CallRecipe[]): Promise<void> {
  logCase('calls', calls);
  const built = calls.map(buildCall);
  const outcomes = await Promise.all(built.map((c) => run(server(), c)));
  outcomes.forEach((o, i) => count(o, built[i]!));
  const problems: string[] = [];
  outcomes.forEach((outcome, i) => {
    const problem = judge(outcome, built[i]!) ?? listenersLeft(built[i]!);
    if (problem !== undefined) problems.push(calls.length > 1 ? `call ${i}: ${problem}` : problem);
  });
  if (problems.length > 0) throw new Error(problems.join('\n'));
}

function assertProperty(
  property: fc.IAsyncProperty<[unknown]> | fc.IAsyncPropertyWithHooks<[unknown]>,
  numRuns: number,
  seed: number,
) {
  return fc.assert(property as fc.IAsyncProperty<[unknown]>, {
    seed,
    numRuns,
    // Printed values are recipes; bigints, NaN and Uint8Arrays are spelled out.
    reporter: (details) => {
      if (!details.failed) return;
      const example = details.counterexample?.[0];
      throw new Error(
        `fuzz property failed after ${details.numRuns} runs (seed ${details.seed}, path ${details.counterexamplePath})\n` +
          `counterexample: ${JSON.stringify(example, bigintSafe)}\n` +
          `${(details.errorInstance as Error | undefined)?.message ?? ''}`,
      );
    },
  });
}

// ---- the properties -------------------------------------------------------------

describe('fuzzed requests', () => {
  it(`single calls on every test model (${runs(1800)} cases)`, async () => {
    await assertProperty(
      fc.asyncProperty(anyCallArb(), async (recipe) => check([recipe])),
      runs(1800),
      SEED,
    ).finally(() => printTally('single calls'));
  }, 600_000);

  it(`valid requests in every form give the exact result (${runs(500)} cases)`, async () => {
    await assertProperty(
      fc.asyncProperty(anyCallArb(true), async (recipe) => check([recipe])),
      runs(500),
      SEED + 1,
    ).finally(() => printTally('valid requests'));
  }, 600_000);

  it(`concurrent calls, valid and not, do not disturb each other (${runs(400)} cases of 2-5)`, async () => {
    await assertProperty(
      fc.asyncProperty(
        fc.array(fc.oneof(anyCallArb(), anyCallArb(true)), { minLength: 2, maxLength: 5 }),
        async (recipes) => check(recipes),
      ),
      runs(400),
      SEED + 2,
    ).finally(() => printTally('concurrent calls'));
  }, 600_000);
});

// ---- memory that moves under an in-flight request (issue 12, item 1) -----------

describe('memory that moves under an in-flight request', () => {
  it(`detached or shrunk inputs and destinations: the data as it was, or an error naming it (${runs(300)} cases, in a child process)`, () => {
    const child = spawnSync(process.execPath, ['--import', 'tsx', `${FIXTURES}/fuzz-moving.ts`], {
      env: {
        ...process.env,
        TEST_LIBRARY: LIBRARY_PATH,
        TEST_MODELS: MODELS,
        FUZZ_SEED: String(SEED + 3),
        FUZZ_RUNS: String(runs(300)),
      },
      encoding: 'utf8',
      timeout: 300_000,
    });
    // The case that was running when the child died: the last one it announced.
    const lastCase = child.stderr
      .trim()
      .split('\n')
      .filter((l) => l.startsWith('moving '))
      .at(-1);
    const died = child.signal !== null || child.status !== 0;
    expect(died ? `the child died (${child.signal ?? `exit ${child.status}`}) on ${lastCase}` : 'alive').toBe(
      'alive',
    );
    const report = JSON.parse(child.stdout.trim().split('\n').at(-1) ?? '{}') as {
      ok?: boolean;
      message?: string;
    };
    expect(report.message ?? '').toBe('');
    expect(report.ok).toBe(true);
  }, 320_000);
});

// ---- nothing is left behind -----------------------------------------------------

describe('after the fuzzing', () => {
  it('no request, response or output buffer is left alive', async () => {
    const pending = () => addon().addonStats().pendingRequests;
    expect(await eventually(() => pending() === 0)).toBe(true);
    const settled = await eventually(async () => {
      await collectGarbage(2);
      const live = fakeEngine.liveObjects();
      return (
        addon().addonStats().liveOutputBuffers <= baseline!.liveOutputBuffers &&
        (live === null ||
          (live.requests === 0 && live.responses === 0 && live.outputBuffers <= baseline!.outputBuffers))
      );
    });
    const live = fakeEngine.liveObjects();
    if (live !== null) {
      expect({
        requests: live.requests,
        responses: live.responses,
        errors: live.errors,
        traces: live.traces,
      }).toEqual({
        requests: 0,
        responses: 0,
        errors: 0,
        traces: 0,
      });
      expect(live.outputBuffers).toBeLessThanOrEqual(baseline!.outputBuffers);
    }
    expect(addon().addonStats().liveOutputBuffers).toBeLessThanOrEqual(baseline!.liveOutputBuffers);
    expect(pending()).toBe(0);
    expect(settled).toBe(true);
  }, 60_000);
});
