/**
 * The KServe v2 gateway in a service of your own, behind the guard: an API
 * key per tenant, a model allow-list and a rate limit each, one audit line per
 * request on stdout, and a graceful stop on SIGTERM.
 *
 *   ALICE_KEY=alice-secret node --import tsx examples/guarded-gateway.ts   # 127.0.0.1:8000 (PORT to change)
 *   curl -s -H 'x-api-key: alice-secret' -X POST localhost:8000/v2/models/identity_fp32/infer \
 *     -d '{"inputs":[{"name":"INPUT0","datatype":"FP32","shape":[1,2],"data":[1,2]}]}'
 *
 * Engine: the fake engine by default, real Triton when TRITON_SERVER_LIB is set
 * (examples/engine.mjs); the first line it prints says which.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createGateway, hashApiKey } from '@triton-node/gateway';
import { Server } from 'triton-node';
import { engine } from './engine.mjs';

const PORT = Number(process.env.PORT ?? 8000);
const ALICE_KEY = process.env.ALICE_KEY ?? 'alice-secret';

/** A repository with one identity model, made for this run. */
async function makeRepository(): Promise<string> {
  const repo = await mkdtemp(join(tmpdir(), 'triton-guarded-gateway-'));
  await mkdir(join(repo, 'identity_fp32', '1'), { recursive: true });
  const config = [
    'name: "identity_fp32"',
    'backend: "identity"',
    'max_batch_size: 8',
    'input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ -1 ] } ]',
    'output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ -1 ] } ]',
    '',
  ].join('\n');
  await writeFile(join(repo, 'identity_fp32', 'config.pbtxt'), config);
  return repo;
}

const { library, backendDirectory } = engine('guarded-gateway');
const repo = await makeRepository();
const server = await Server.create({
  library,
  modelRepository: repo,
  backendDirectory,
});
await server.loadModel('identity_fp32');
const gateway = createGateway(server, {
  guard: {
    // Only the key's hash is kept in the configuration.
    apiKeys: [{ sha256: hashApiKey(ALICE_KEY), tenant: 'alice', id: 'alice-1' }],
    tenants: { alice: { models: ['identity_*'], limits: { requestsPerSecond: 100, maxConcurrent: 8 } } },
    open: ['health'],
    audit: { stream: process.stdout },
  },
});
const listener = http.createServer(gateway.handler);
await new Promise<void>((resolve) => listener.listen(PORT, '127.0.0.1', resolve));
console.error(`[guarded-gateway] listening on http://127.0.0.1:${(listener.address() as AddressInfo).port}`);

process.once('SIGTERM', async () => {
  listener.close();
  await gateway.drain({ timeoutMs: 10_000 });
  gateway.close(); // writes the audit lines still buffered
  await server.stop();
  await rm(repo, { recursive: true, force: true });
});
