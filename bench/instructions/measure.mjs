#!/usr/bin/env node
// Instructions the JS thread spends per small inference, counted by
// callgrind: two runs of the same workload that differ only in the number of
// measured requests, so start-up, model load, warm-up and shutdown cancel
// out. Needs valgrind. The engine's own threads are not counted; the engine's
// work on the JS thread (ServerInferAsync, response deletion) is.
//
//   node bench/instructions/measure.mjs [--workload infer|stream]
//        [--library L] [--backend-dir D] [--requests N] [--warmup W]
// --workload stream counts per response of square's streams (N responses).
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '../..');
const { values } = parseArgs({
  options: {
    library: { type: 'string', default: join(root, 'build/fake/libtritonserver.so') },
    'backend-dir': { type: 'string', default: '' },
    repository: { type: 'string', default: join(root, 'bench/models') },
    workload: { type: 'string', default: 'infer' },
    requests: { type: 'string', default: '20000' },
    warmup: { type: 'string', default: '10000' },
  },
});

// What the breakdown reports: inclusive costs of these functions (the first
// symbol that contains the text).
const PARTS = [
  ['native submit (ServerCore::Submit)', 'triton_node::ServerCore::Submit('],
  ['  of it, the engine: ServerInferAsync', 'TRITONSERVER_ServerInferAsync'],
  ['  of it, the engine: InferenceRequestNew', 'TRITONSERVER_InferenceRequestNew'],
  ['drain (ServerCore::Drain)', 'triton_node::ServerCore::Drain('],
  ['  of it, the decoder and the JS it calls', 'triton_node::EventEncoder::Call('],
  ['  of it, the engine: InferenceResponseDelete', 'TRITONSERVER_InferenceResponseDelete'],
  ['microtasks (the JS after each await)', 'v8::internal::MicrotaskQueue::RunMicrotasks('],
  ['minor GC', 'v8::internal::Heap::Scavenge('],
];

function run(dir, count) {
  const out = join(dir, `cg.${count}.%p`);
  const args = [
    '--tool=callgrind',
    '--separate-threads=yes',
    `--callgrind-out-file=${out}`,
    process.execPath,
    join(here, 'workload.mjs'),
    values.workload,
    String(count),
    values.warmup,
    values.library,
    values.repository,
    values['backend-dir'],
  ];
  const r = spawnSync('valgrind', args, { stdio: ['ignore', 'ignore', 'pipe'] });
  if (r.status !== 0) throw new Error(`valgrind failed (${r.status}): ${String(r.stderr).slice(-2000)}`);
  // Thread 1 is the JS thread.
  const file = readdirSync(dir).find((f) => f.startsWith(`cg.${count}.`) && f.endsWith('-01'));
  if (file === undefined) throw new Error('callgrind wrote no file for thread 1');
  const path = join(dir, file);
  const total = Number(/^summary:\s*(\d+)/m.exec(readFileSync(path, 'utf8'))?.[1]);
  const annotated = execFileSync('callgrind_annotate', ['--inclusive=yes', '--threshold=100', path], {
    maxBuffer: 256 * 1024 * 1024,
  }).toString();
  const parts = PARTS.map(([, symbol]) => {
    const line = annotated.split('\n').find((l) => l.includes(symbol));
    return line === undefined ? 0 : Number(line.trim().split(/\s+/)[0].replaceAll(',', ''));
  });
  return { total, parts };
}

if (!['infer', 'stream'].includes(values.workload)) {
  console.error(`--workload: infer or stream, not '${values.workload}'`);
  process.exit(2);
}
if (spawnSync('valgrind', ['--version']).status !== 0) {
  console.error('valgrind is not installed: this measurement needs callgrind');
  process.exit(2);
}
const n = Number(values.requests);
const dir = mkdtempSync(join(tmpdir(), 'triton-node-instructions-'));
try {
  const base = run(dir, 0);
  const measured = run(dir, n);
  const per = (a, b) => Math.round((b - a) / n);
  const unit = values.workload === 'stream' ? 'response' : 'request';
  console.log(`workload: ${values.workload}; library: ${values.library}`);
  console.log(
    `JS thread, instructions per ${unit} (${n}, after ${values.warmup} warm-up): ${per(base.total, measured.total)}`,
  );
  PARTS.forEach(([label], i) => console.log(`  ${label}: ${per(base.parts[i], measured.parts[i])}`));
} finally {
  rmSync(dir, { recursive: true, force: true });
}
