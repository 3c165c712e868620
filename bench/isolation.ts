/**
 * What an isolated group costs: the same HTTP inferences through a gateway
 * in process (`createGateway` over a Server here) and through an isolating
 * front (`createIsolatedGateway`: the Server in a group process, reached
 * over a Unix socket), the front with its shared memory on and off. Same
 * autocannon load for each, in one run; prints req/s and p50/p99 with the
 * ratio to the in-process gateway. Then kills the group process with
 * SIGKILL a few times and reports how long until it serves again.
 *
 *   npx tsx bench/isolation.ts [--library L] [--duration 5] [--connections 16] [--kills 3]
 *
 * Results go to docs/benchmarks.md by hand, never into a test assertion.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { type IsolatedGateway, createGateway, createIsolatedGateway } from '@triton-node/gateway';
import autocannon from 'autocannon';
import { Server } from 'triton-node';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { values } = parseArgs({
  options: {
    library: {
      type: 'string',
      default: process.env.TRITON_SERVER_LIB ?? `${ROOT}/packages/fake-engine/build/fake/libtritonserver.so`,
    },
    duration: { type: 'string', default: '5' },
    connections: { type: 'string', default: '16' },
    kills: { type: 'string', default: '3' },
  },
});
const SERVER = {
  modelRepository: `${ROOT}/bench/models`,
  library: values.library!,
  modelControlMode: 'none' as const,
};
const INFER = '/v2/models/identity_fp32/infer';

/** A request body: JSON for a few values, binary for many. */
function body(elements: number): { body: Buffer; headers: Record<string, string> } {
  if (elements <= 16) {
    const data = Array.from({ length: elements }, (_, i) => i);
    const json = { inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [1, elements], data }] };
    return { body: Buffer.from(JSON.stringify(json)), headers: { 'content-type': 'application/json' } };
  }
  const header = Buffer.from(
    JSON.stringify({
      inputs: [
        {
          name: 'INPUT0',
          datatype: 'FP32',
          shape: [1, elements],
          parameters: { binary_data_size: elements * 4 },
        },
      ],
      outputs: [{ name: 'OUTPUT0', parameters: { binary_data: true } }],
    }),
  );
  return {
    body: Buffer.concat([header, Buffer.alloc(elements * 4, 1)]),
    headers: { 'inference-header-content-length': String(header.length) },
  };
}

async function listen(handler: http.RequestListener): Promise<{ url: string; server: http.Server }> {
  const server = http.createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

async function load(url: string, elements: number) {
  const { body: b, headers } = body(elements);
  const r = await autocannon({
    url: `${url}${INFER}`,
    method: 'POST',
    body: b,
    headers,
    connections: Number(values.connections),
    duration: Number(values.duration),
  });
  return { reqPerSec: r.requests.average, p50Ms: r.latency.p50, p99Ms: r.latency.p99, non2xx: r.non2xx };
}

async function front(
  sharedMemory: boolean,
): Promise<{ gateway: IsolatedGateway; url: string; server: http.Server }> {
  const gateway = createIsolatedGateway({
    groups: { g: { server: SERVER } },
    ...(sharedMemory ? {} : { sharedMemory: false }),
  });
  await gateway.start();
  return { gateway, ...(await listen(gateway.handler)) };
}

async function restartTimes(gateway: IsolatedGateway, kills: number): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < kills; i++) {
    const pid = gateway.groups()[0]!.pid!;
    const started = performance.now();
    process.kill(pid, 'SIGKILL');
    while (gateway.groups()[0]!.pid === pid || gateway.groups()[0]!.state !== 'ready') {
      await new Promise((r) => setTimeout(r, 5));
    }
    times.push(Math.round(performance.now() - started));
    await new Promise((r) => setTimeout(r, 200));
  }
  return times;
}

const cases = [
  ['json-16B', 4],
  ['binary-1MiB', 256 * 1024],
] as const;
const rows: Array<Record<string, unknown>> = [];
const server = await Server.create(SERVER);
const direct = await listen(createGateway(server).handler);
const shm = await front(true);
const socket = await front(false);
for (const [name, elements] of cases) {
  const base = await load(direct.url, elements);
  rows.push({ case: name, side: 'in-process gateway', ...base, ratio: 1 });
  for (const [side, f] of [
    ['front, shared memory', shm],
    ['front, socket only', socket],
  ] as const) {
    const r = await load(f.url, elements);
    rows.push({ case: name, side, ...r, ratio: Number((r.reqPerSec / base.reqPerSec).toFixed(2)) });
  }
}
console.table(rows);
const counters = shm.gateway.groups()[0]!;
console.log(
  `shared memory requests: ${counters.sharedMemoryRequests}, socket requests: ${counters.socketRequests}`,
);
const restarts = await restartTimes(shm.gateway, Number(values.kills));
console.log(JSON.stringify({ cpus: os.cpus().length, restartMs: restarts, rows }));
for (const f of [direct, shm, socket]) f.server.close();
await Promise.all([shm.gateway.drain(), socket.gateway.drain()]);
await server.stop();
