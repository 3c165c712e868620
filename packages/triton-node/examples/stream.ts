// Streaming from a decoupled model (repeat): responses arrive one by one, like LLM tokens.
// Shows per-response handling, early exit (cancels the request) and the stream's timings.
// Engine: the fake engine by default, real Triton when TRITON_SERVER_LIB is set
// (examples/engine.mjs); the first line it prints says which.
import { fileURLToPath } from 'node:url';
import { Server } from 'triton-node';
import { engine } from './engine.mjs';

const { library, backendDirectory } = engine('stream');
const server = await Server.create({
  modelRepository: fileURLToPath(new URL('./models', import.meta.url)),
  library,
  backendDirectory,
});
try {
  await server.loadModel('repeat_int32');
  const model = server.model('repeat_int32');
  const tokens = [101, 102, 103, 104, 105, 106];

  // repeat sends one response per IN element, sleeping DELAY[i] ms before each.
  const stream = model.stream({
    inputs: {
      IN: Int32Array.from(tokens),
      DELAY: Uint32Array.from(tokens.map(() => 30)),
      WAIT: Uint32Array.from([0]),
    },
  });
  for await (const response of stream) {
    const out = (response.outputs.OUT!.data as Int32Array)[0];
    const idx = (response.outputs.IDX!.data as Uint32Array)[0];
    console.log(`response ${idx}: ${out}`);
  }
  console.log('stats', stream.stats);

  // Leaving the loop early cancels the request; an AbortSignal does the same from outside.
  const controller = new AbortController();
  setTimeout(() => controller.abort(), 100);
  try {
    for await (const response of model.stream({
      inputs: {
        IN: Int32Array.from(tokens),
        DELAY: Uint32Array.from(tokens.map(() => 50)),
        WAIT: Uint32Array.from([0]),
      },
      signal: controller.signal,
    })) {
      console.log('before abort:', (response.outputs.OUT!.data as Int32Array)[0]);
    }
  } catch (err) {
    console.log(`aborted: ${(err as Error).name} ${(err as { code?: string }).code}`);
  }
} finally {
  await server.stop();
}
