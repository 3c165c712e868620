import { PLACEMENTS, gpuSkipReason, place, readFloats } from '@triton-node/test-support/gpu/gpu-env.js';
import { skipAllIf, useServer } from '@triton-node/test-support/helpers.js';
// Every input placement against every output placement, on a model with a
// CPU instance (Triton copies device inputs to the host for it) and on one
// with a GPU instance (KIND_GPU), with the values checked each time. Device
// inputs go in with their buffer attributes; a request mixes an input of
// each kind. Skips (with the reason) where there is no usable CUDA device.
import { describe, expect, it } from 'vitest';
import { CudaBuffer, HostBuffer, cuda } from '../../lib/index.js';

describe('every placement on CPU and GPU instances', () => {
  skipAllIf(gpuSkipReason);
  const server = useServer(['identity_nobatch', 'identity_gpu', 'identity_multi'], {}, gpuSkipReason);

  // Values of each case's own: a pooled output buffer left unwritten would
  // still hold an earlier case's values, and must not pass.
  let caseNumber = 0;
  for (const model of ['identity_nobatch', 'identity_gpu']) {
    for (const input of PLACEMENTS) {
      for (const output of PLACEMENTS) {
        const offset = 1000 * ++caseNumber;
        it(`${model}: ${input} input → ${output} output`, async () => {
          const values = Float32Array.from({ length: 3001 }, (_, i) => offset + i * 0.5 - 11);
          const data = place(values, input);
          try {
            const result = await server()
              .model(model)
              .infer({
                inputs: { INPUT0: { data, shape: [values.length], datatype: 'FP32' } },
                outputMemory: output,
              });
            const t = result.outputs.OUTPUT0!;
            expect(t.memoryType).toBe(output);
            expect(t.shape).toEqual([values.length]);
            expect(readFloats(t)).toEqual(values);
            t.dispose();
          } finally {
            if (!(data instanceof Float32Array)) data.dispose();
          }
        });
      }
    }
  }

  it('two device inputs of different sizes in one request each keep their own attributes', async () => {
    // identity_multi: INPUT0 FP32, INPUT1 INT32, INPUT2 BYTES. The two device
    // inputs are appended with one reused attributes object: nothing of the
    // first (its size) may reach the second.
    const a = Float32Array.from({ length: 257 }, (_, i) => i * 1.5);
    const b = Int32Array.from({ length: 1031 }, (_, i) => -i);
    const da = cuda.alloc(a.byteLength);
    const db = cuda.alloc(b.byteLength);
    da.copyFrom(a);
    db.copyFrom(b);
    try {
      for (const outputMemory of PLACEMENTS) {
        const r = await server()
          .model('identity_multi')
          .infer({
            inputs: {
              INPUT0: { data: da, shape: [a.length], datatype: 'FP32' },
              INPUT1: { data: db, shape: [b.length], datatype: 'INT32' },
              INPUT2: ['x', 'yz'],
            },
            outputMemory,
          });
        expect(readFloats(r.outputs.OUTPUT0!)).toEqual(a);
        const o1 = r.outputs.OUTPUT1!.data;
        const ints =
          o1 instanceof CudaBuffer
            ? o1.toTypedArray(Int32Array)
            : o1 instanceof HostBuffer
              ? new Int32Array(o1.view(Int32Array))
              : (o1 as Int32Array);
        expect(ints).toEqual(b);
        r.dispose();
      }
    } finally {
      da.dispose();
      db.dispose();
    }
  });
});
