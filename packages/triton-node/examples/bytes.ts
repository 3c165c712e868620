// BYTES tensors: strings, raw byte arrays, or an already length-prefixed Buffer.
// Engine: the fake engine by default, real Triton when TRITON_SERVER_LIB is set
// (examples/engine.mjs); the first line it prints says which.
import { fileURLToPath } from 'node:url';
import { Server, encodeBytes } from 'triton-node';
import { engine } from './engine.mjs';

const { library, backendDirectory } = engine('bytes');
const server = await Server.create({
  modelRepository: fileURLToPath(new URL('./models', import.meta.url)),
  library,
  backendDirectory,
});
try {
  await server.loadModel('identity_bytes');
  const model = server.model('identity_bytes');

  // Strings are sent as UTF-8.
  const a = await model.infer({ inputs: { INPUT0: ['plain', 'ünïcødé ✓', ''] } });
  console.log('strings ->', a.outputs.OUTPUT0!.strings());

  // Raw bytes per element.
  const b = await model.infer({ inputs: { INPUT0: [new Uint8Array([0, 1, 2]), new Uint8Array([255])] } });
  console.log('bytes   ->', b.outputs.OUTPUT0!.data);

  // Already in Triton's format (4-byte little-endian length + bytes per element): sent as is.
  const prefixed = encodeBytes(['pre', 'encoded']);
  const c = await model.infer({ inputs: { INPUT0: prefixed } });
  console.log('buffer  ->', c.outputs.OUTPUT0!.strings());
} finally {
  await server.stop();
}
