/**
 * Silero VAD, a stateful ONNX model, through Triton's sequence batcher: a
 * real utterance (test/fixtures/utterance-16k.wav, made with espeak-ng and
 * sox) in chunks of 512 samples, the h/c state kept by Triton as implicit
 * sequence state. Several sequences interleaved request by request give the
 * probabilities onnxruntime-node gives for the same chunks with h/c chained
 * by hand. A sequence that idled past max_sequence_idle_microseconds, or
 * whose request was cancelled, is gone: continuing it is an error that names
 * the sequence.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { FIXTURES, rejection, rejectionAfterIdle } from '@triton-node/test-support/helpers.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type InferRequest, TritonError } from '../../lib/index.js';
import { DiffTable, maxAbsDiff, ort, referenceSession, useRealModelServer } from './onnx-helpers.js';

/** Silero VAD v4 at 16 kHz takes 512, 1024 or 1536 samples a call; 512 is 32 ms. */
const CHUNK = 512;
const RATE = 16_000;
/** Short, so the idle test waits little; long next to a VAD step (~1 ms), so live sequences never idle out. */
const IDLE_US = 1_000_000;

/**
 * silero_vad keeps an idle sequence far longer than a busy machine pauses
 * between the requests of a sequence; the test of the idle limit runs on
 * silero_vad_idle, a copy that ends a sequence idle for IDLE_US.
 */
const real = useRealModelServer(['silero_vad'], { maxSequenceIdleMicroseconds: 10_000_000, instances: 4 }, [
  {
    of: 'silero_vad',
    name: 'silero_vad_idle',
    change: (c) => ({
      ...c,
      instance_group: [{ kind: 'KIND_CPU', count: 1 }],
      sequence_batching: { ...c.sequence_batching, max_sequence_idle_microseconds: IDLE_US },
    }),
  },
]);
const table = new DiffTable();
afterAll(() => table.print('onnx-vad: Triton sequence batcher vs onnxruntime-node 1.22, h/c by hand'));

/** The samples of a 16-bit PCM mono WAV file, as floats in [-1, 1). */
function readWav(file: string): { rate: number; samples: Float32Array } {
  const wav = readFileSync(file);
  if (wav.toString('latin1', 0, 4) !== 'RIFF' || wav.toString('latin1', 8, 12) !== 'WAVE') {
    throw new Error(`${file}: not a RIFF WAVE file`);
  }
  let rate = 0;
  for (let at = 12; at + 8 <= wav.length; ) {
    const id = wav.toString('latin1', at, at + 4);
    const size = wav.readUInt32LE(at + 4);
    const body = wav.subarray(at + 8, at + 8 + size);
    if (id === 'fmt ') {
      const [format, channels, bits] = [body.readUInt16LE(0), body.readUInt16LE(2), body.readUInt16LE(14)];
      if (format !== 1 || channels !== 1 || bits !== 16) {
        throw new Error(
          `${file}: expected 16-bit PCM mono, got format ${format}, ${channels} channels, ${bits} bits`,
        );
      }
      rate = body.readUInt32LE(4);
    } else if (id === 'data') {
      const samples = new Float32Array(size >> 1);
      for (let i = 0; i < samples.length; i++) samples[i] = body.readInt16LE(i * 2) / 32768;
      return { rate, samples };
    }
    at += 8 + size + (size & 1);
  }
  throw new Error(`${file}: no data chunk`);
}

/** Whole chunks of CHUNK samples (the tail shorter than a chunk is left out). */
function chunks(samples: Float32Array): Float32Array[] {
  const out: Float32Array[] = [];
  for (let at = 0; at + CHUNK <= samples.length; at += CHUNK) out.push(samples.slice(at, at + CHUNK));
  return out;
}

const SR = new BigInt64Array([BigInt(RATE)]);

/** The speech probability of each chunk, h and c carried from one call to the next by hand. */
async function referenceProbabilities(
  session: ort.InferenceSession,
  audio: Float32Array[],
): Promise<number[]> {
  let h: ort.Tensor = new ort.Tensor('float32', new Float32Array(2 * 64), [2, 1, 64]);
  let c: ort.Tensor = new ort.Tensor('float32', new Float32Array(2 * 64), [2, 1, 64]);
  const sr = new ort.Tensor('int64', SR, []);
  const out: number[] = [];
  for (const chunk of audio) {
    const r = await session.run({ input: new ort.Tensor('float32', chunk, [1, CHUNK]), sr, h, c });
    out.push((r.output!.data as Float32Array)[0]!);
    h = r.hn!;
    c = r.cn!;
  }
  return out;
}

type CorrelationId = number | bigint | string;

function vadRequest(id: CorrelationId, chunk: Float32Array, start: boolean, end: boolean): InferRequest {
  return {
    correlationId: id,
    sequenceStart: start,
    sequenceEnd: end,
    inputs: { input: { data: chunk, shape: [1, CHUNK] }, sr: { data: SR, shape: [1] } },
  };
}

async function probability(
  id: CorrelationId,
  chunk: Float32Array,
  start: boolean,
  end: boolean,
  model = 'silero_vad',
): Promise<number> {
  const r = await real.server().infer(model, vadRequest(id, chunk, start, end));
  const out = r.outputs.output!;
  expect(out.shape).toEqual([1, 1]);
  return (out.data as Float32Array)[0]!;
}

/** Checks that continuing `id` without sequenceStart is refused, naming the sequence. */
async function expectSequenceGone(id: CorrelationId, chunk: Float32Array): Promise<void> {
  expectGone(id, await rejection(probability(id, chunk, false, false)));
}

function expectGone(id: CorrelationId, err: TritonError): void {
  expect(err).toBeInstanceOf(TritonError);
  expect(err.code).toBe('INVALID_ARG');
  expect(err.message).toContain(`sequence ${id}`);
  expect(err.message).toMatch(/START/);
  expect(err.correlationId).toBe(id);
}

let session: ort.InferenceSession;
let utterance: Float32Array[];
let expected: number[];
beforeAll(async () => {
  if (real.skipReason() !== undefined) return;
  session = await referenceSession(real.files().sileroVad);
  const wav = readWav(join(FIXTURES, 'utterance-16k.wav'));
  expect(wav.rate).toBe(RATE);
  utterance = chunks(wav.samples);
  expected = await referenceProbabilities(session, utterance);
}, 60_000);

describe('silero_vad through the sequence batcher', () => {
  it('the utterance: speech in the middle, silence at its ends (the reference is meaningful)', () => {
    // 0.3 s of silence was padded on each side: about 9 chunks.
    expect(Math.max(...expected.slice(0, 5))).toBeLessThan(0.5);
    expect(Math.max(...expected.slice(-5))).toBeLessThan(0.5);
    expect(expected.filter((p) => p > 0.5).length).toBeGreaterThan(10);
    console.log(
      `silero_vad reference over ${utterance.length} chunks: ${expected.filter((p) => p > 0.5).length} above 0.5, max ${Math.max(...expected).toFixed(3)}`,
    );
  });

  it('three sequences interleaved request by request each match the hand-chained reference', async () => {
    const quieter = utterance.map((c) => c.map((v) => v * 0.5));
    const later = utterance.slice(7);
    const sequences: Array<{ id: CorrelationId; audio: Float32Array[]; expected: number[]; got: number[] }> =
      [
        { id: 101, audio: utterance, expected, got: [] },
        {
          id: 2n ** 53n + 7n,
          audio: quieter,
          expected: await referenceProbabilities(session, quieter),
          got: [],
        },
        { id: 'utterance-c', audio: later, expected: await referenceProbabilities(session, later), got: [] },
      ];
    const rounds = Math.max(...sequences.map((s) => s.audio.length));
    for (let k = 0; k < rounds; k++) {
      // One request of each live sequence at once: the batcher holds three sequences in flight.
      await Promise.all(
        sequences
          .filter((s) => k < s.audio.length)
          .map(async (s) => {
            s.got.push(await probability(s.id, s.audio[k]!, k === 0, k === s.audio.length - 1));
          }),
      );
    }
    for (const s of sequences) {
      expect(s.got.length).toBe(s.expected.length);
      const diff = maxAbsDiff(s.got, s.expected);
      table.add('silero_vad', 'output', `sequence ${s.id} (${s.audio.length} chunks, interleaved)`, diff);
      expect(diff).toBeLessThanOrEqual(1e-5);
    }
    // The sequences differ from each other: the state is kept per sequence, not shared.
    expect(maxAbsDiff(sequences[0]!.got, sequences[1]!.got)).toBeGreaterThan(1e-3);
  });

  it('a sequence started again under the same id starts from the zero state', async () => {
    const n = 12;
    const first: number[] = [];
    const again: number[] = [];
    for (let k = 0; k < n; k++) first.push(await probability(7, utterance[k + 10]!, k === 0, false));
    // Restarting an unended sequence: Triton starts it anew (the earlier one is dropped).
    for (let k = 0; k < n; k++) again.push(await probability(7, utterance[k + 10]!, k === 0, k === n - 1));
    const reference = await referenceProbabilities(session, utterance.slice(10, 10 + n));
    table.add(
      'silero_vad',
      'output',
      'restarted sequence',
      Math.max(maxAbsDiff(first, reference), maxAbsDiff(again, reference)),
    );
    expect(maxAbsDiff(first, reference)).toBeLessThanOrEqual(1e-5);
    expect(maxAbsDiff(again, reference)).toBeLessThanOrEqual(1e-5);
  });

  it('continuing a sequence that was never started is INVALID_ARG naming it', async () => {
    await expectSequenceGone(424242, utterance[0]!);
    await expectSequenceGone('never-started', utterance[0]!);
  });

  it('a sequence idle past max_sequence_idle_microseconds is ended: continuing it is an error naming it', async () => {
    const id = 'idles-out';
    const model = 'silero_vad_idle';
    for (let k = 0; k < 3; k++) await probability(id, utterance[k]!, k === 0, false, model);
    const idled = await rejectionAfterIdle(
      () => probability(id, utterance[3]!, false, false, model),
      IDLE_US / 1000,
    );
    expectGone(id, idled as TritonError);
    // A new start under the same id works and begins from the zero state.
    const p = await probability(id, utterance[0]!, true, true, model);
    expect(Math.abs(p - expected[0]!)).toBeLessThanOrEqual(1e-5);
  }, 60_000);

  it('a cancelled request ends its sequence: it and the requests queued behind it are CANCELLED, naming the sequence', async () => {
    const id = 9001;
    const n = 40;
    const cancelAt = 20;
    // A long first request (250 s of audio in one call, hundreds of ms) keeps
    // the sequence's slot busy while the others queue behind it, so the cancel
    // finds its request still queued: it comes right after the submissions,
    // with no await between, and this thread would have to be held off the
    // CPU for all that time for Triton to reach the request first.
    const long = new Float32Array(CHUNK * 8000);
    for (let i = 0; i < long.length; i++) long[i] = utterance[(i >> 9) % utterance.length]![i % CHUNK]!;
    const abort = new AbortController();
    const infer = (chunk: Float32Array, k: number) =>
      real.server().infer('silero_vad', {
        ...vadRequest(id, chunk, k === 0, false),
        inputs: { input: { data: chunk, shape: [1, chunk.length] }, sr: { data: SR, shape: [1] } },
        ...(k === cancelAt ? { signal: abort.signal } : {}),
      });
    const pending = [long, ...utterance.slice(1, n)].map(infer);
    abort.abort();
    const outcomes = await Promise.allSettled(pending);
    const failed = outcomes.flatMap((o, k) => (o.status === 'rejected' ? [k] : []));
    // Those ahead of the cancelled request ran; it and every one queued behind it are CANCELLED.
    expect(failed).toEqual(Array.from({ length: n - cancelAt }, (_, i) => cancelAt + i));
    for (const k of failed) {
      const err = (outcomes[k] as PromiseRejectedResult).reason as TritonError;
      expect(err).toBeInstanceOf(TritonError);
      expect(err.code).toBe('CANCELLED');
      expect(err.name).toBe(k === cancelAt ? 'AbortError' : 'TritonError');
      expect(err.correlationId).toBe(id);
      expect(err.message).toMatch(
        new RegExp(
          `^request to model 'silero_vad' was (aborted|answered CANCELLED, with no message) \\(sequence ${id}\\)$`,
        ),
      );
    }
    console.log(
      `silero_vad cancel: the aborted request: "${(outcomes[cancelAt] as PromiseRejectedResult).reason.message}"; the next: "${(outcomes[cancelAt + 1] as PromiseRejectedResult).reason.message}"`,
    );
    await expectSequenceGone(id, utterance[n]!);
  });

  it('a request without a correlation id is refused by the sequence batcher', async () => {
    const err = await rejection(
      real.server().infer('silero_vad', { inputs: vadRequest(1, utterance[0]!, true, true).inputs }),
    );
    expect(err.code).toBe('INVALID_ARG');
    console.log(`silero_vad without a correlation id: ${err.message}`);
  });
});
