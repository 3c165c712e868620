// One worker of `bench --threads`: attaches to the bench's server and keeps
// `concurrency` identity requests in flight until the window ends (the
// warm-up included); reports
// the completions inside the window. Runs the library's sources (as the
// bench does) through tsx.
import { existsSync, readlinkSync } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import { register } from 'tsx/esm/api';

register();
const { Server } = await import('triton-node');
const { shared, model: name, shape, concurrency } = workerData;
const now = () => performance.timeOrigin + performance.now();
const server = await Server.attach(shared);
const model = server.model(name);
const data = new Float32Array(shape.reduce((a, b) => a * b, 1));
const request = { inputs: { INPUT0: { data, shape, datatype: 'FP32' } } };
let completed = 0;
let errors = 0;
let firstError;
const loop = async (windowStart, windowEnd) => {
  while (now() < windowEnd) {
    try {
      await model.infer(request);
      const t = now();
      if (t >= windowStart && t < windowEnd) completed++;
    } catch (err) {
      errors++;
      firstError ??= String(err?.message ?? err);
    }
  }
};
// The clock starts once every worker is attached and warm: the bench posts
// the window then.
const { windowStart, windowEnd } = await new Promise((resolve) => {
  parentPort.once('message', resolve);
  // This thread's id (Linux), for the bench's per-thread CPU figures.
  const tid = existsSync('/proc/thread-self')
    ? Number(readlinkSync('/proc/thread-self').split('/').pop())
    : -1;
  parentPort.postMessage({ ready: true, tid });
});
await Promise.all(Array.from({ length: concurrency }, () => loop(windowStart, windowEnd)));
await server.stop();
parentPort.postMessage({ completed, errors, firstError });
