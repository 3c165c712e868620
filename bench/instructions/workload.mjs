// The workloads of bench/instructions/measure.mjs, run under callgrind:
// 'infer': sequential small inferences of identity_fp32 ([1,4] FP32);
// 'stream': streams of square_int32 asked for 1,000 responses each, counted
// per response. `warmup` untimed units, then `count` more.
import { Server } from '../../dist/index.js';

const [workload, count, warmup, library, repository, backendDirectory] = process.argv.slice(2);
const server = await Server.create({
  modelRepository: repository,
  library,
  backendDirectory: backendDirectory || undefined,
  modelControlMode: 'explicit',
  log: { info: false, warn: false },
});
const STREAM_RESPONSES = 1000;

async function infer(model, n) {
  const input = new Float32Array(4);
  for (let i = 0; i < n; i++) await model.infer({ inputs: { INPUT0: input } });
}

async function stream(model, n) {
  const input = new Int32Array([STREAM_RESPONSES]);
  for (let i = 0; i < n / STREAM_RESPONSES; i++) {
    let seen = 0;
    for await (const r of model.stream({ inputs: { IN: input } })) seen += r.outputs.OUT.data.length;
    if (seen !== STREAM_RESPONSES) throw new Error(`square answered ${seen} responses`);
  }
}

const name = workload === 'stream' ? 'square_int32' : 'identity_fp32';
const run = workload === 'stream' ? stream : infer;
await server.loadModel(name);
const model = server.model(name);
await run(model, Number(warmup));
await run(model, Number(count));
await server.stop();
