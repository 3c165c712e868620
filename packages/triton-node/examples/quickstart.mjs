// Quickstart: start an in-process Triton server, load a model, run one inference.
// Plain JavaScript (Node.js 20+), with the models beside it in ./models:
//   in the repository:        npm install && npm run demo
//   from the installed package: node node_modules/triton-node/examples/quickstart.mjs
// Uses Triton when it is found (TRITON_SERVER_LIB, or /opt/tritonserver/lib/libtritonserver.so),
// otherwise triton-node's fake engine, which runs the same test models without Triton or a GPU.
import { fileURLToPath } from 'node:url';
import { Server, TritonError, loadLibrary } from 'triton-node';
import { fakeEngine } from 'triton-node/testing';

const modelRepository = fileURLToPath(new URL('./models', import.meta.url));

function pickLibrary() {
  try {
    return loadLibrary().path;
  } catch (err) {
    if (!(err instanceof TritonError)) throw err;
    if (!fakeEngine.available()) {
      console.error(err.message);
      console.error('\nThe fake engine is not installed either: run `npx triton-node doctor`.');
      process.exit(1);
    }
    console.log(`Triton not found; running on triton-node's fake engine (${fakeEngine.libraryPath}).`);
    return fakeEngine.libraryPath;
  }
}

const server = await Server.create({
  modelRepository,
  library: pickLibrary(),
  backendDirectory: process.env.TRITON_BACKEND_DIR || undefined,
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
