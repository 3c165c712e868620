// Quickstart: start an in-process Triton server, load a model, run one inference.
// Plain JavaScript (Node.js 20+), with the models beside it in ./models:
//   in the repository:        npm install && npm run demo
//   from the installed package: node node_modules/triton-node/examples/quickstart.mjs
// Engine: the fake engine by default, real Triton when TRITON_SERVER_LIB is set
// (examples/engine.mjs); the first line it prints says which. The fake engine runs the same test
// models without Triton or a GPU.
import { fileURLToPath } from 'node:url';
import { Server } from 'triton-node';
import { engine } from './engine.mjs';

const modelRepository = fileURLToPath(new URL('./models', import.meta.url));
const { library, backendDirectory } = engine('quickstart');

const server = await Server.create({
  modelRepository,
  library,
  backendDirectory,
});
try {
  const meta = await server.metadata();
  console.log(`server ${meta.name} ${meta.version} is live: ${await server.isLive()}`);

  await server.loadModel('identity_fp32');
  const model = server.model('identity_fp32');
  const input = new Float32Array([1, 2, 3, 4]);
  const result = await model.infer({ inputs: { INPUT0: { data: input, shape: [1, 4] } } });
  const out = result.outputs.OUTPUT0;
  console.log(
    `${result.model} v${result.version}: ${out.name} ${out.datatype} [${out.shape}] =`,
    Array.from(out.data),
  );
} finally {
  await server.stop();
}
