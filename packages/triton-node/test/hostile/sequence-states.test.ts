// A sequence model whose state asks for 4 TiB per sequence (security review,
// issue 40, finding 5): `dims: [1099511627776]` in sequence_batching.state.
// The fake engine loaded it and aborted the process (std::bad_alloc) on the
// first sequenceStart request; real r25.07 allocates a zero_data initial
// state while it loads the model and crashes (SIGSEGV) when that fails. Each
// case runs in a child process (test/fixtures/huge-sequence-state.ts), so
// that an abort fails the test instead of ending the runner. Now:
//   * an initial state larger than the machine's memory (also in a model an
//     ensemble composes, and in a startup model) is refused by triton-node
//     before Triton sees it, on every library;
//   * a state alone: the fake refuses it at load, naming it; real r25.07
//     loads it and fails the sequence's first request with a TritonError.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { onnxRuntimeNode } from '@triton-node/test-support/backends/real-models.js';
import {
  BACKEND_DIR,
  FIXTURES,
  LIBRARY_PATH,
  library,
  skipAllIf,
} from '@triton-node/test-support/helpers.js';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** The sequence models are ONNX models: they need ONNX Runtime (onnxruntime-node on the fake, the backend on Triton). */
function onnxRuntimeMissing(): string | false {
  if (library().isFake) {
    return onnxRuntimeNode() === undefined ? 'onnxruntime-node (a devDependency) is not installed' : false;
  }
  return BACKEND_DIR !== undefined && existsSync(join(BACKEND_DIR, 'onnxruntime'))
    ? false
    : 'real Triton without an onnxruntime backend in TRITON_BACKEND_DIR';
}

interface Outcome {
  ok: boolean;
  name?: string;
  code?: string;
  message?: string;
}

/** Runs the fixture's case to its end: what it printed, or how it died. */
function run(testCase: string): Record<string, Outcome> {
  const child = spawnSync(process.execPath, ['--import', 'tsx', join(FIXTURES, 'huge-sequence-state.ts')], {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: 120_000,
    env: { ...process.env, TEST_CASE: testCase, TEST_LIBRARY: LIBRARY_PATH },
  });
  const output = `${child.stdout}${child.stderr}`;
  expect({ status: child.status, signal: child.signal }, `the child ended badly:\n${output}`).toEqual({
    status: 0,
    signal: null,
  });
  const line = child.stdout.split('\n').find((l) => l.startsWith('RESULT '));
  expect(line, output).toBeDefined();
  return JSON.parse(line!.slice('RESULT '.length)) as Record<string, Outcome>;
}

const INITIAL =
  /sequence_batching initial_state 'init' of state 'STATE_IN': dims \[1099511627776\] of TYPE_INT32 take 4398046511104 bytes, more than this machine's \d+ bytes of memory/;

describe('a sequence state of 4 TiB', () => {
  skipAllIf(onnxRuntimeMissing());

  it('an initial state that large is refused before Triton allocates it, at loadModel and at startup', () => {
    const r = run('initial');
    expect(r.load).toMatchObject({ ok: false, name: 'TritonError', code: 'INVALID_ARG' });
    expect(r.load!.message).toMatch(/^load failed for model 'seq_initial': model 'seq_initial': /);
    expect(r.load!.message).toMatch(INITIAL);
    expect(r.load!.message).toMatch(/triton-node refuses the load$/);
    expect(r.startup).toMatchObject({ ok: false, name: 'TritonError', code: 'INVALID_ARG' });
    expect(r.startup!.message).toMatch(
      /^startup models cannot load \(triton-node refuses them\): model 'seq_initial': /,
    );
    expect(r.startup!.message).toMatch(INITIAL);
  }, 150_000);

  it('so is an ensemble that composes such a model (Triton loads it with the ensemble)', () => {
    const r = run('ensemble');
    expect(r.load).toMatchObject({ ok: false, name: 'TritonError', code: 'INVALID_ARG' });
    expect(r.load!.message).toMatch(/^load failed for model 'seq_ensemble': model 'seq_initial': /);
    expect(r.load!.message).toMatch(INITIAL);
  }, 150_000);

  it('a state alone: the fake refuses the load naming it; Triton fails the first request, and nothing aborts', () => {
    const r = run('state');
    if (library().isFake) {
      expect(r.load).toMatchObject({ ok: false, name: 'TritonError', code: 'INVALID_ARG' });
      expect(r.load!.message).toMatch(
        /sequence_batching state 'STATE_IN' of model 'seq_state': dims \[1099511627776\] of TYPE_INT32 take 4398046511104 bytes per sequence, more than this machine's \d+ bytes of memory/,
      );
    } else {
      // r25.07: "onnx runtime error 2: not enough space: expected 4398046511104, got 0".
      expect(r.load).toEqual({ ok: true });
      expect(r.infer).toMatchObject({ ok: false, name: 'TritonError' });
    }
  }, 150_000);
});
