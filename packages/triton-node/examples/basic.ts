// Basic inference: several inputs, typed outputs, a requested-output subset,
// request parameters, per-request timing, and a validation error.
// Engine: the fake engine by default, real Triton when TRITON_SERVER_LIB is set
// (examples/engine.mjs); the first line it prints says which.
import { fileURLToPath } from 'node:url';
import { Server, TritonError } from 'triton-node';
import { engine } from './engine.mjs';

const { library, backendDirectory } = engine('basic');
const server = await Server.create({
  modelRepository: fileURLToPath(new URL('./models', import.meta.url)),
  library,
  backendDirectory,
});
try {
  await server.loadModel('identity_multi');
  const model = server.model('identity_multi');

  // Inputs: a Float32Array, an Int32Array and BYTES given as strings. Shapes come from the model's dims.
  const result = await model.infer({
    inputs: {
      INPUT0: new Float32Array([0.5, 1.5]),
      INPUT1: new Int32Array([7, 8, 9]),
      INPUT2: ['hello', 'world'],
    },
    parameters: { temperature: 0.7, max_tokens: 16 },
    id: 'example-1',
    timing: true,
  });
  console.log('OUTPUT0', result.outputs.OUTPUT0!.data);
  console.log('OUTPUT1', result.outputs.OUTPUT1!.data);
  console.log('OUTPUT2', result.outputs.OUTPUT2!.strings());
  console.log('timing (µs)', result.timing);

  // Only the outputs you need.
  const subset = await model.infer({
    inputs: { INPUT0: new Float32Array([1]), INPUT1: new Int32Array([2]), INPUT2: ['3'] },
    outputs: ['OUTPUT1'],
  });
  console.log('subset', Object.keys(subset.outputs));

  // Mistakes are caught before the request reaches Triton, naming the input.
  try {
    await model.infer({
      inputs: { INPUT0: new Int32Array([1]), INPUT1: new Int32Array([2]), INPUT2: ['x'] },
    });
  } catch (err) {
    if (err instanceof TritonError) console.log(`${err.code}: ${err.message}`);
    else throw err;
  }
} finally {
  await server.stop();
}
