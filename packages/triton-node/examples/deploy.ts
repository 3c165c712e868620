// Rolling out model versions safely: deploy, canary, automatic rollback,
// manual rollback, history. Works on a copy of examples/models/identity_fp32
// in a temporary repository (a deployment writes version folders).
//   in the repository: npx tsx examples/deploy.ts
// Engine: the fake engine by default, real Triton when TRITON_SERVER_LIB is set
// (examples/engine.mjs); the first line it prints says which.
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type InferRequest, Server, type Tensor } from 'triton-node';
import { engine } from './engine.mjs';

const MODEL = 'identity_fp32';
const repository = mkdtempSync(join(tmpdir(), 'triton-node-deploy-example-'));
cpSync(fileURLToPath(new URL(`./models/${MODEL}`, import.meta.url)), join(repository, MODEL), {
  recursive: true,
});

const { library, backendDirectory } = engine('deploy');
const server = await Server.create({
  modelRepository: repository,
  library,
  backendDirectory,
});
await server.loadModel(MODEL);

// Live traffic through the whole rollout: unversioned requests go to the pinned version.
let running = true;
const served = new Map<number, number>();
let failed = 0;
const client = (async () => {
  const model = server.model(MODEL);
  while (running) {
    try {
      const r = await model.infer({ inputs: { INPUT0: Float32Array.of(1, 2, 3) } });
      served.set(r.version, (served.get(r.version) ?? 0) + 1);
    } catch {
      failed++;
    }
  }
})();

const golden: InferRequest[] = [{ inputs: { INPUT0: Float32Array.of(0.5, -1, 7) } }];
const sameOutputs = (a: Record<string, Tensor>, b: Record<string, Tensor>) =>
  Object.keys(a).every((k) => String(a[k]!.data) === String(b[k]!.data));

try {
  // Version 2: new files, checked by golden requests compared with version 1, then pinned.
  const v2 = await server.deploy(MODEL, {
    files: { 'notes.txt': 'version 2: retrained' },
    canary: { requests: golden, compare: sameOutputs },
    onStep: (s) => console.log(`  step ${s.step} (version ${s.version})`),
  });
  console.log(`deploy v${v2.to}: ${v2.status}; pinned ${server.pinnedVersion(MODEL)}`);

  // Version 3: its canary sends a request it refuses, so it is unloaded and 2 stays pinned.
  const v3 = await server.deploy(MODEL, {
    files: { 'notes.txt': 'version 3: broken' },
    canary: { requests: [{ inputs: { WRONG_INPUT: Float32Array.of(1) } }] },
  });
  console.log(`deploy v${v3.to}: ${v3.status} (${v3.reason}); pinned ${server.pinnedVersion(MODEL)}`);

  // Back to version 1 by hand.
  const back = await server.rollback(MODEL, { to: 1, reason: 'example' });
  console.log(`rollback to v${back.to}: ${back.status}; pinned ${server.pinnedVersion(MODEL)}`);

  running = false;
  await client;
  console.log(`requests served by version: ${JSON.stringify(Object.fromEntries(served))}; failed: ${failed}`);
  console.log('history:');
  for (const d of await server.deployments(MODEL))
    console.log(`  ${d.kind} ${d.from} -> ${d.to}: ${d.status}`);
} finally {
  running = false;
  await client;
  await server.stop();
  rmSync(repository, { recursive: true, force: true });
}
if (failed > 0) process.exitCode = 1;
