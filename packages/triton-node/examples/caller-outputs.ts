// Caller-provided outputs: Triton writes the output straight into your array (no copy).
// Reuse one buffer across requests on a hot path; this also works where the runtime
// refuses external buffers (Electron).
// Engine: the fake engine by default, real Triton when TRITON_SERVER_LIB is set
// (examples/engine.mjs); the first line it prints says which.
import { fileURLToPath } from 'node:url';
import { Server } from 'triton-node';
import { engine } from './engine.mjs';

const { library, backendDirectory } = engine('caller-outputs');
const server = await Server.create({
  modelRepository: fileURLToPath(new URL('./models', import.meta.url)),
  library,
  backendDirectory,
});
try {
  await server.loadModel('identity_nobatch');
  const model = server.model('identity_nobatch');
  const into = new Float32Array(4);
  for (let i = 0; i < 3; i++) {
    const input = Float32Array.from({ length: 4 }, (_, k) => i * 10 + k);
    const result = await model.infer({ inputs: { INPUT0: input }, outputs: { OUTPUT0: { into } } });
    console.log(`request ${i}: same array: ${result.outputs.OUTPUT0!.data === into}`, Array.from(into));
  }
} finally {
  await server.stop();
}
