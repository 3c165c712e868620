// One Triton, several JS threads. The main thread creates the server and loads the model; each
// worker thread attaches to it with the value server.share() gave (no second Triton, no second
// copy of the model's weights) and runs requests of its own, whose results arrive on that
// worker's own thread. stop() in a worker only detaches it; the main thread stops the server.
//
//   node examples/workers.mjs [threads] [requests per thread]
//
// Engine: the fake engine by default, real Triton when TRITON_SERVER_LIB is set
// (examples/engine.mjs); the first line it prints says which.
import { fileURLToPath } from 'node:url';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import { Server } from 'triton-node';
import { engine } from './engine.mjs';

if (isMainThread) {
  const threads = Number(process.argv[2] ?? 4);
  const requests = Number(process.argv[3] ?? 2000);
  const { library, backendDirectory } = engine('workers');
  const server = await Server.create({
    modelRepository: fileURLToPath(new URL('./models', import.meta.url)),
    library,
    backendDirectory,
  });
  try {
    await server.loadModel('identity_fp32');
    // Plain data: post it to as many workers as you like (workerData or postMessage).
    const shared = server.share();
    const started = performance.now();
    const reports = await Promise.all(
      Array.from(
        { length: threads },
        (_, thread) =>
          new Promise((resolve, reject) => {
            // This same file, in the worker: the branch below.
            const worker = new Worker(new URL(import.meta.url), { workerData: { shared, thread, requests } });
            worker.once('message', resolve);
            worker.once('error', reject);
          }),
      ),
    );
    const seconds = (performance.now() - started) / 1000;
    for (const r of reports) {
      console.log(
        `thread ${r.thread}: ${r.requests} requests in ${r.seconds.toFixed(2)} s, ${r.wrong} wrong`,
      );
    }
    const total = reports.reduce((n, r) => n + r.requests, 0);
    console.log(
      `${threads} threads, one server: ${total} requests, ${Math.round(total / seconds)} per second`,
    );
  } finally {
    await server.stop();
  }
} else {
  const { shared, thread, requests } = workerData;
  const server = await Server.attach(shared);
  const model = server.model('identity_fp32');
  const started = performance.now();
  let wrong = 0;
  // 16 requests in flight from this thread.
  let next = 0;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (next < requests) {
        const i = next++;
        const input = new Float32Array([thread, i, -i, 0.5]);
        const result = await model.infer({ inputs: { INPUT0: input } });
        const out = result.outputs.OUTPUT0.data;
        if (out[0] !== thread || out[1] !== i || out[2] !== -i) wrong++;
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  await server.stop(); // detaches this thread; the server runs on
  parentPort.postMessage({ thread, requests, wrong, seconds });
}
