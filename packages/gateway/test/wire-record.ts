/**
 * Records what a Triton core library answers to the wire-answer cases into
 * test/fixtures/real-triton-r25.07/wire-answers.json (wire-answers.test.ts
 * checks the gateway's answers against it):
 *
 *   source /tmp/real.sh   # TRITON_SERVER_LIB, TRITON_BACKEND_DIR, LD_LIBRARY_PATH
 *   npx tsx test/gateway/wire-record.ts test/fixtures/real-triton-r25.07/wire-answers.json
 *
 * Raw inputs go through raw-input-probe.cc (the addon does not make raw
 * inputs), the rest through the addon. What tritonserver's HTTP server
 * decides itself (before its core sees the request) cannot be recorded
 * without a tritonserver binary: `frontend` holds it as read in the server's
 * r25.07 source, and says so.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { rawServer } from '@triton-node/test-support/hostile/raw-server.js';
import { Server } from 'triton-node';
import { writeWireModels } from './wire-models.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** The raw bodies of the cases: L0_http's raw binary tests, on models of the same shapes. */
export const RAW_CASES: Array<{ model: string; body: string }> = [
  { model: 'raw_fp32', body: Buffer.from(new Float32Array([0, 1, 2, 3, 4, 5, 6, 7]).buffer).toString('hex') },
  { model: 'raw_fp32', body: '' },
  { model: 'raw_fp32', body: '010203040506' },
  { model: 'raw_bytes_one', body: Buffer.from('427').toString('hex') },
  { model: 'raw_bytes', body: Buffer.from('427').toString('hex') },
  { model: 'raw_fp16_2d', body: '003c003c003c003c' },
  { model: 'raw_three', body: Buffer.from(new Float32Array(24).buffer).toString('hex') },
];

/** The override texts of the load cases (the second is what simple_http_model_control.py sends). */
export const NOT_JSON_CONFIGS = ['not json', '"parameters": {"config": {{"max_batch_size": "16"}}}'];

function probeRaw(repo: string): unknown[] {
  const lib = process.env.TRITON_SERVER_LIB!;
  const probe = join(mkdtempSync(join(tmpdir(), 'raw-probe-')), 'probe');
  execFileSync('g++', [
    '-std=c++17',
    '-I',
    join(ROOT, 'native/include'),
    fileURLToPath(
      new URL('../../test-support/fixtures/real-triton-r25.07/wire/raw-input-probe.cc', import.meta.url),
    ),
    `-L${dirname(lib)}`,
    '-ltritonserver',
    ...(process.env.LD_LIBRARY_PATH ?? '')
      .split(':')
      .filter(Boolean)
      .map((d) => `-Wl,-rpath-link,${d}`),
    '-o',
    probe,
  ]);
  const out = execFileSync(
    probe,
    [repo, process.env.TRITON_BACKEND_DIR ?? '', ...RAW_CASES.map((c) => `${c.model}=${c.body}`)],
    { env: { ...process.env, LD_LIBRARY_PATH: `${dirname(lib)}:${process.env.LD_LIBRARY_PATH ?? ''}` } },
  );
  return out
    .toString()
    .trim()
    .split('\n')
    .map((line, i) => ({ ...(JSON.parse(line) as object), body: RAW_CASES[i]!.body }));
}

async function loadAnswers(repo: string): Promise<unknown[]> {
  const server = await rawServer(repo);
  const answers = [];
  for (const config of NOT_JSON_CONFIGS) {
    const err = await server.loadModel('raw_fp32', config, []).then(
      () => undefined,
      (e: { code: string; message: string }) => e,
    );
    answers.push({ model: 'raw_fp32', config, code: err?.code, message: err?.message });
  }
  await server.stop();
  return answers;
}

/** The second of two requests to queue_one, submitted while the first waits for its batch. */
async function queueAnswer(repo: string): Promise<unknown> {
  const server = await Server.create({
    modelRepository: repo,
    library: process.env.TRITON_SERVER_LIB!,
    backendDirectory: process.env.TRITON_BACKEND_DIR!,
    modelControlMode: 'explicit',
  });
  await server.loadModel('queue_one');
  const request = () => ({ inputs: { INPUT0: { data: new Float32Array([1, 2]), shape: [1, 2] } } });
  const first = server.model('queue_one').infer(request());
  const second = await server
    .model('queue_one')
    .infer(request())
    .then(
      () => undefined,
      (e: { code: string; message: string }) => ({ code: e.code, message: e.message }),
    );
  await first;
  await server.stop();
  return second;
}

const INT64_MAX = '9223372036854775807';

/** tritonserver's own answers, read in server r25.07 (src/http_server.cc, src/shared_memory_manager.cc). */
const FRONTEND = {
  source:
    'triton-inference-server/server r25.07, read (no tritonserver binary ran here): src/http_server.cc ParseJsonTritonIO, ' +
    'GetElementCount (src/common.cc), ReadDataFromJsonHelper/JsonBytesArrayByteSize with HTTP_MAX_JSON_NESTING_DEPTH 100 ' +
    '(src/common.h), HttpCodeFromError; src/shared_memory_manager.cc OpenSharedMemoryRegion. qa/L0_http/http_test.py ' +
    'checks the same statuses and texts.',
  cases: [
    {
      case: 'shape whose element count passes INT64_MAX',
      shape: '[16, 1152921504606846978]',
      status: 400,
      code: 'INVALID_ARG',
      message: `invalid shape for input 'INPUT0': shape [16,1152921504606846978] causes total element count to exceed maximum size of ${INT64_MAX}`,
    },
    {
      case: 'shape whose byte size passes INT64_MAX',
      shape: '[4, 1152921504606846978]',
      status: 400,
      code: 'INVALID_ARG',
      message: `byte size overflow for input 'INPUT0': element count (4611686018427387912) * data type size (4) exceeds maximum allowed size (${INT64_MAX})`,
    },
    {
      case: 'negative dimension',
      shape: '[2, -5]',
      status: 500,
      code: 'INTERNAL',
      message: "Unable to parse 'shape': attempt to access JSON non-unsigned-integer as unsigned-integer",
    },
    {
      case: "'data' nested 100 deep (99 is taken)",
      status: 400,
      code: 'INVALID_ARG',
      message: 'JSON nesting depth exceeds maximum allowed limit (100)',
    },
    {
      case: 'system shared memory registered with an empty key',
      status: 500,
      code: 'INTERNAL',
      message: "Unable to open shared memory region: ''",
    },
  ],
};

async function main(): Promise<void> {
  const out = process.argv[2];
  if (out === undefined || !process.env.TRITON_SERVER_LIB) {
    throw new Error('usage: TRITON_SERVER_LIB=... npx tsx test/gateway/wire-record.ts <out.json>');
  }
  const repo = writeWireModels(mkdtempSync(join(tmpdir(), 'wire-models-')));
  const record = {
    description:
      "What a Triton r25.07 core answered to the wire-answer cases (test/gateway/wire-models.ts' models), recorded by test/gateway/wire-record.ts; test/gateway/wire-answers.test.ts checks the gateway's answers against it. Observations, and in 'frontend' what tritonserver's HTTP server answers before its core, as read in its source.",
    library: 'real Triton r25.07 (CPU build), libtritonserver.so, identity backend',
    core: {
      raw: probeRaw(repo),
      loadConfigNotJson: await loadAnswers(repo),
      queueFull: await queueAnswer(repo),
    },
    frontend: FRONTEND,
  };
  writeFileSync(out, `${JSON.stringify(record, null, 2)}\n`);
}

await main();
