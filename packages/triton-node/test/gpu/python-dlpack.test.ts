// Issue 29, on a GPU: Python models that take a CudaBuffer input as it is
// (FORCE_CPU_ONLY_INPUT_TENSORS "no": the stub gets the device memory over
// CUDA IPC) and hand it back through DLPack, and one that computes its output
// on the GPU with torch. Every input placement against every output
// placement, as test/gpu/placements.test.ts does for identity. Needs real
// Triton with a GPU-enabled python backend (the stub finds torch through
// PYTHONPATH); skips with the reason elsewhere.
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PLACEMENTS, gpuSkipReason, place, readFloats } from '@triton-node/test-support/gpu/gpu-env.js';
import {
  BACKEND_DIR,
  LIBRARY_PATH,
  eventually,
  library,
  skipAllIf,
} from '@triton-node/test-support/helpers.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Server, type Tensor, cuda } from '../../lib/index.js';

// DLPack's device type for CUDA memory (kDLCUDA) and for host memory (kDLCPU).
const DL_CUDA = 2;
const DL_CPU = 1;

// Echo through DLPack, no framework: the output is made from the input's
// capsule, so it is the same memory. WHERE tells where each tensor lived.
const ECHO_MODEL = `import numpy as np
import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def execute(self, requests):
        responses = []
        for request in requests:
            given = pb_utils.get_input_tensor_by_name(request, "INPUT0")
            back = pb_utils.Tensor.from_dlpack("OUTPUT0", given.to_dlpack())
            where = np.array(
                [given.__dlpack_device__()[0], back.__dlpack_device__()[0], int(given.is_cpu())],
                dtype=np.int64,
            )
            responses.append(pb_utils.InferenceResponse(output_tensors=[back, pb_utils.Tensor("WHERE", where)]))
        return responses
`;

// Computes on the GPU with torch: OUTPUT0 = INPUT0 * 2 + 1, made on the
// input's device; SAME is 1 when torch's view of the input shares its memory
// (from_dlpack made no copy).
const TORCH_MODEL = `import numpy as np
import torch
import torch.utils.dlpack
import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def execute(self, requests):
        responses = []
        for request in requests:
            given = pb_utils.get_input_tensor_by_name(request, "INPUT0")
            view = torch.utils.dlpack.from_dlpack(given.to_dlpack())
            again = torch.utils.dlpack.from_dlpack(given.to_dlpack())
            device = view.device if view.is_cuda else torch.device("cuda")
            result = view.to(device) * 2 + 1
            out = pb_utils.Tensor.from_dlpack("OUTPUT0", torch.utils.dlpack.to_dlpack(result))
            info = np.array(
                [int(view.is_cuda), int(view.data_ptr() == again.data_ptr()), int(out.is_cpu())],
                dtype=np.int64,
            )
            responses.append(pb_utils.InferenceResponse(output_tensors=[out, pb_utils.Tensor("WHERE", info)]))
        return responses
`;

function config(name: string): string {
  return `name: "${name}"
backend: "python"
max_batch_size: 0
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ -1 ] } ]
output [
  { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ -1 ] },
  { name: "WHERE" data_type: TYPE_INT64 dims: [ 3 ] }
]
instance_group [ { kind: KIND_GPU count: 1 gpus: [ 0 ] } ]
parameters { key: "FORCE_CPU_ONLY_INPUT_TENSORS" value: { string_value: "no" } }
`;
}

const noPython =
  BACKEND_DIR && existsSync(join(BACKEND_DIR, 'python', 'libtriton_python.so'))
    ? false
    : 'needs real Triton with a GPU-enabled python backend (TRITON_BACKEND_DIR/python)';

// This process's own shm region prefix: what /dev/shm holds under it is ours.
const SHM_PREFIX = `tn_pygpu_${process.pid}_`;

function ownRegions(): string[] {
  return readdirSync('/dev/shm').filter((f) => f.startsWith(SHM_PREFIX));
}

/** Stub processes whose command line names this process's shm prefix. */
function ownStubs(): string[] {
  return readdirSync('/proc').filter((p) => {
    if (!/^\d+$/.test(p)) return false;
    try {
      return readFileSync(`/proc/${p}/cmdline`, 'utf8').includes(SHM_PREFIX);
    } catch {
      return false;
    }
  });
}

describe('python models with device tensors (DLPack)', () => {
  const reason = gpuSkipReason || noPython;
  skipAllIf(reason);
  let server: Server | undefined;
  let repo = '';

  beforeAll(async () => {
    if (reason !== false) return;
    library();
    repo = mkdtempSync(join(tmpdir(), 'tn-py-gpu-'));
    for (const [name, source] of [
      ['py_dlpack_echo', ECHO_MODEL],
      ['py_torch_gpu', TORCH_MODEL],
    ] as const) {
      mkdirSync(join(repo, name, '1'), { recursive: true });
      writeFileSync(join(repo, name, 'config.pbtxt'), config(name));
      writeFileSync(join(repo, name, '1', 'model.py'), source);
    }
    server = await Server.create({
      modelRepository: repo,
      library: LIBRARY_PATH,
      ...(BACKEND_DIR === undefined ? {} : { backendDirectory: BACKEND_DIR }),
      exitTimeoutSeconds: 10,
      backendConfig: { python: { 'shm-region-prefix-name': SHM_PREFIX } },
    });
    await server.loadModel('py_dlpack_echo');
    await server.loadModel('py_torch_gpu');
  }, 120_000);

  afterAll(async () => {
    await server?.stop();
    if (repo !== '') rmSync(repo, { recursive: true, force: true });
  });

  it('runs its stubs under this process’s shm prefix', () => {
    expect(ownStubs().length).toBeGreaterThanOrEqual(2);
    expect(ownRegions().length).toBeGreaterThanOrEqual(2);
  });

  function where(t: Tensor): number[] {
    return Array.from(t.data as BigInt64Array, Number);
  }

  // Each case has values of its own: a pooled buffer that was not written
  // would still hold an earlier case's values, and must not pass.
  let caseNumber = 0;

  for (const input of PLACEMENTS) {
    for (const output of PLACEMENTS) {
      const offset = 1000 * ++caseNumber;
      it(`py_dlpack_echo: ${input} input → ${output} output, handed back without a copy`, async () => {
        const values = Float32Array.from({ length: 4099 }, (_, i) => offset + i * 0.25 - 7);
        const data = place(values, input);
        try {
          const r = await server!.model('py_dlpack_echo').infer({
            inputs: { INPUT0: { data, shape: [values.length], datatype: 'FP32' } },
            outputs: { OUTPUT0: { memory: output }, WHERE: { memory: 'cpu' } },
          });
          const out = r.outputs.OUTPUT0!;
          expect(out.memoryType).toBe(output);
          expect(readFloats(out)).toEqual(values);
          // A device input reaches Python on the device; the output made from
          // its capsule is on the same device (no copy to the host).
          const [inDevice, outDevice, inIsCpu] = where(r.outputs.WHERE!);
          const expected = input === 'gpu' ? DL_CUDA : DL_CPU;
          expect({ inDevice, outDevice, inIsCpu }).toEqual({
            inDevice: expected,
            outDevice: expected,
            inIsCpu: input === 'gpu' ? 0 : 1,
          });
          r.dispose();
        } finally {
          if (!(data instanceof Float32Array)) data.dispose();
        }
      });
    }
  }

  for (const input of PLACEMENTS) {
    for (const output of PLACEMENTS) {
      const offset = 1000 * ++caseNumber;
      it(`py_torch_gpu: ${input} input → GPU-computed output placed ${output}`, async () => {
        const values = Float32Array.from({ length: 1537 }, (_, i) => offset + i * 0.5 - 3);
        const data = place(values, input);
        try {
          const r = await server!.model('py_torch_gpu').infer({
            inputs: { INPUT0: { data, shape: [values.length], datatype: 'FP32' } },
            outputs: { OUTPUT0: { memory: output }, WHERE: { memory: 'cpu' } },
          });
          const out = r.outputs.OUTPUT0!;
          expect(out.memoryType).toBe(output);
          expect(readFloats(out)).toEqual(values.map((v) => v * 2 + 1));
          const [inputOnGpu, sameMemory, outIsCpu] = where(r.outputs.WHERE!);
          expect({ inputOnGpu, sameMemory, outIsCpu }).toEqual({
            inputOnGpu: input === 'gpu' ? 1 : 0,
            sameMemory: 1,
            outIsCpu: 0,
          });
          r.dispose();
        } finally {
          if (!(data instanceof Float32Array)) data.dispose();
        }
      });
    }
  }

  it('1,000 concurrent device-memory requests on the echo model, all correct', async () => {
    const buffers = Array.from({ length: 1000 }, (_, k) => {
      const values = Float32Array.from({ length: 64 }, (_, i) => k * 100 + i);
      const b = cuda.alloc(values.byteLength);
      b.copyFrom(values);
      return { values, b };
    });
    try {
      const results = await Promise.all(
        buffers.map(({ b, values }) =>
          server!
            .model('py_dlpack_echo')
            .infer({
              inputs: { INPUT0: { data: b, shape: [values.length], datatype: 'FP32' } },
              outputs: { OUTPUT0: { memory: 'gpu' } },
            })
            .then((r) => {
              const got = readFloats(r.outputs.OUTPUT0!);
              r.dispose();
              return got;
            }),
        ),
      );
      results.forEach((got, k) => expect(got).toEqual(buffers[k]!.values));
    } finally {
      for (const { b } of buffers) b.dispose();
    }
  }, 120_000);

  // Last: stops the server the file shares.
  it('stop() leaves no stub process and no /dev/shm region behind', async () => {
    await server!.stop();
    server = undefined;
    await eventually(() => ownStubs().length === 0);
    expect(ownStubs()).toEqual([]);
    expect(ownRegions()).toEqual([]);
  });
});
