// Issue 29: process.exit() or an uncaught exception while a stream is open.
// The addon stops its servers in an exit handler; Triton and its backends
// register their own exit handlers later (server start, a backend's first
// model) and libc runs the latest first, so the addon's handler must be
// registered again after them (native/server/exit_registry.cc). The fake
// imitates that order (native/fake/core/process_state.cc: a stop after its singletons'
// handler aborts); the real Python backend crashed here (SIGSEGV/SIGABRT).
import { spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  BACKEND_DIR,
  FIXTURES,
  LIBRARY_PATH,
  MODELS,
  SETTLE_MS,
  skipIf,
} from '@triton-node/test-support/helpers.js';
import { describe, expect, it } from 'vitest';

function runChild(env: Record<string, string>) {
  return spawnSync(process.execPath, ['--import', 'tsx', `${FIXTURES}/exit-mid-stream.ts`], {
    env: { ...process.env, TEST_LIBRARY: LIBRARY_PATH, ...env },
    encoding: 'utf8',
    timeout: 90_000,
  });
}

describe('exit mid-stream (issue 29)', () => {
  it('process.exit(7) mid-stream of repeat_int32 exits with 7, no signal', () => {
    const child = runChild({ TEST_MODELS: MODELS, TEST_STREAM_MODEL: 'repeat_int32', TEST_END: 'exit' });
    expect(child.stderr).not.toContain('during exit()');
    expect(child.signal).toBeNull();
    expect(child.stdout).toContain('streaming');
    expect(child.status).toBe(7);
  });

  it('an uncaught exception mid-stream of repeat_int32 exits with 1, no signal', () => {
    const child = runChild({ TEST_MODELS: MODELS, TEST_STREAM_MODEL: 'repeat_int32', TEST_END: 'throw' });
    expect(child.stderr).not.toContain('during exit()');
    expect(child.stderr).toContain('uncaught mid-stream');
    expect(child.signal).toBeNull();
    expect(child.status).toBe(1);
  });

  // A decoupled Python model of our own that streams words from a thread.
  const PY_MODEL = `import threading
import time

import numpy as np
import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def initialize(self, args):
        self.threads = []

    def execute(self, requests):
        for request in requests:
            count = int(pb_utils.get_input_tensor_by_name(request, "COUNT").as_numpy()[0])
            delay = int(pb_utils.get_input_tensor_by_name(request, "DELAY_MS").as_numpy()[0]) / 1000.0
            sender = request.get_response_sender()
            t = threading.Thread(target=self.words, args=(sender, count, delay), daemon=True)
            self.threads.append(t)
            t.start()
        return None

    def words(self, sender, count, delay):
        for i in range(count):
            word = np.array([("word%d" % i).encode()], dtype=np.object_)
            sender.send(pb_utils.InferenceResponse(output_tensors=[pb_utils.Tensor("WORD", word)]))
            time.sleep(delay)
        sender.send(flags=pb_utils.TRITONSERVER_RESPONSE_COMPLETE_FINAL)

    def finalize(self):
        for t in self.threads:
            t.join(timeout=1)
`;
  const PY_CONFIG = `name: "py_words"
backend: "python"
max_batch_size: 0
model_transaction_policy { decoupled: true }
input [
  { name: "COUNT" data_type: TYPE_INT32 dims: [ 1 ] },
  { name: "DELAY_MS" data_type: TYPE_INT32 dims: [ 1 ] }
]
output [ { name: "WORD" data_type: TYPE_STRING dims: [ 1 ] } ]
instance_group [ { kind: KIND_CPU count: 1 } ]
`;
  const pythonBackend = BACKEND_DIR && existsSync(join(BACKEND_DIR, 'python', 'libtriton_python.so'));
  const noPython = pythonBackend
    ? false
    : 'needs real Triton with a python backend (TRITON_BACKEND_DIR/python)';

  function stubPids(): string[] {
    return readdirSync('/proc').filter((p) => {
      if (!/^\d+$/.test(p)) return false;
      try {
        return readFileSync(`/proc/${p}/comm`, 'utf8').startsWith('triton_python');
      } catch {
        return false;
      }
    });
  }

  // Triton's default exit timeout (30 s): the stop waits the stream out and
  // then deletes the server, which crashed (r25.07 CPU: SIGSEGV) when it ran
  // after Triton's exit handlers. With exitTimeoutSeconds 2 the stop timed
  // out, the server was left undeleted and the process ended in _Exit, so
  // that case survived by luck.
  for (const end of ['exit', 'throw'] as const) {
    it(`python: ${end === 'exit' ? 'process.exit(7)' : 'an uncaught exception'} mid-stream exits with its code, no signal, no stub or shm left`, (ctx) => {
      skipIf(ctx, noPython);
      const repo = mkdtempSync(join(tmpdir(), 'tn-exit-py-'));
      try {
        mkdirSync(join(repo, 'py_words', '1'), { recursive: true });
        writeFileSync(join(repo, 'py_words', 'config.pbtxt'), PY_CONFIG);
        writeFileSync(join(repo, 'py_words', '1', 'model.py'), PY_MODEL);
        const stubsBefore = stubPids();
        const shmBefore = new Set(readdirSync('/dev/shm'));
        const child = runChild({
          TEST_MODELS: repo,
          TEST_STREAM_MODEL: 'py_words',
          TEST_STREAM_KIND: 'words',
          TEST_END: end,
          TEST_EXIT_TIMEOUT: 'default',
        });
        expect(child.stdout).toContain('streaming');
        expect(child.signal).toBeNull();
        expect(child.status).toBe(end === 'exit' ? 7 : 1);
        // The stubs end once their parent has gone (a second or so).
        const deadline = Date.now() + SETTLE_MS;
        let leftStubs = stubPids().filter((p) => !stubsBefore.includes(p));
        while (leftStubs.length > 0 && Date.now() < deadline) {
          spawnSync('sleep', ['0.5']);
          leftStubs = stubPids().filter((p) => !stubsBefore.includes(p));
        }
        expect(leftStubs).toEqual([]);
        const newShm = readdirSync('/dev/shm').filter((f) => !shmBefore.has(f));
        expect(newShm).toEqual([]);
      } finally {
        rmSync(repo, { recursive: true, force: true });
      }
    });
  }
});
