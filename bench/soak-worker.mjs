// One worker of the soak's hostile phase (bench/soak.ts): attaches to the
// soak's server with the value it was posted and does what `role` says.
//   flood:   10,000 requests in flight, then reports; the soak terminates it
//   detach:  an input's memory transferred away while its request runs
//   checked: `requests` requests each checked against its input, then stop()
//   twice:   attaches a second time with the same value, infers on both
import { parentPort, workerData } from 'node:worker_threads';
import { register } from 'tsx/esm/api';

register();
const { Server } = await import('triton-node');
const { shared, role, requests } = workerData;
const report = (m) => parentPort.postMessage(m);
const text = (err) => `${err?.name}: ${err?.code ?? ''} ${err?.message ?? err}`;

const same = (out, input) => out.length === input.length && out.every((v, i) => v === input[i]);

try {
  const server = await Server.attach(shared);
  const model = server.model('identity_fp32');
  if (role === 'flood') {
    for (let i = 0; i < requests; i++)
      model.infer({ inputs: { INPUT0: new Float32Array([i]) } }).catch(() => {});
    report({ flooding: requests });
  } else if (role === 'detach') {
    // The first request of a model waits for its config before it is
    // submitted (a detach before the submit is refused, rightly): one first.
    await model.infer({ inputs: { INPUT0: new Float32Array(4) } });
    const n = 1024 * 1024;
    const data = new Float32Array(n).fill(2.5);
    data[0] = 1;
    data[n - 1] = 3;
    const pending = model.infer({ inputs: { INPUT0: { data, shape: [1, n] } } });
    const copy = structuredClone(data.buffer, { transfer: [data.buffer] });
    const r = await pending;
    const o = r.outputs.OUTPUT0.data;
    const ok =
      data.length === 0 && copy.byteLength === n * 4 && o.length === n && o[0] === 1 && o[n - 1] === 3;
    await server.stop();
    report({ done: true, errors: ok ? [] : ['a transferred-away input did not reach Triton whole'] });
  } else if (role === 'checked' || role === 'twice') {
    const other = role === 'twice' ? await Server.attach(shared) : server;
    const errors = [];
    await Promise.all(
      Array.from({ length: requests }, async (_, i) => {
        const input = new Float32Array([i, -i, i / 4, 9]);
        const on = i % 2 === 0 ? server : other;
        try {
          const r = await on.model('identity_fp32').infer({ inputs: { INPUT0: input } });
          if (!same(r.outputs.OUTPUT0.data, input)) errors.push(`request ${i}: wrong output`);
        } catch (err) {
          errors.push(`request ${i}: ${text(err)}`);
        }
      }),
    );
    if (other !== server) await other.stop();
    await server.stop();
    report({ done: true, errors: errors.slice(0, 5), errorCount: errors.length });
  }
} catch (err) {
  report({ done: true, errors: [`${role}: ${text(err)}`], errorCount: 1 });
}
