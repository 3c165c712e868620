// BYTES tensors: strings, raw byte arrays, or an already length-prefixed Buffer.
import { fileURLToPath } from 'node:url';
import { Server, encodeBytes } from 'triton-node';
import { fakeEngine } from 'triton-node/testing';

const server = await Server.create({
  modelRepository: fileURLToPath(new URL('./models', import.meta.url)),
  library: process.env.TRITON_SERVER_LIB || fakeEngine.libraryPath,
  backendDirectory: process.env.TRITON_BACKEND_DIR || undefined,
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
