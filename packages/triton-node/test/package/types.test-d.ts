// Type-level tests: checked by the TypeScript compiler (`npm run typecheck`,
// and vitest's typecheck mode), never run. Each `@ts-expect-error` line must
// fail to compile: a wrong tensor name or datatype that compiled would fail
// this file.
import { describe, expectTypeOf, it } from 'vitest';
import type {
  CudaBuffer,
  HostBuffer,
  InferResult,
  InferStream,
  Model,
  ModelSpec,
  Server,
  Tensor,
  TensorData,
  TensorDataOf,
} from '../../lib/index.js';

interface Classifier extends ModelSpec {
  inputs: { IMAGE: 'FP32'; MASK?: 'BOOL'; TEXT: 'BYTES' };
  outputs: { SCORES: 'FP32'; LABELS: 'BYTES'; IDS: 'INT64' };
}

declare const server: Server;
declare const pinned: HostBuffer;
declare const device: CudaBuffer;

describe('Tensor<D, M>', () => {
  it('types data by datatype, on the CPU unless a memory is given', () => {
    expectTypeOf<Tensor<'FP32'>['data']>().toEqualTypeOf<Float32Array>();
    expectTypeOf<Tensor<'INT64'>['data']>().toEqualTypeOf<BigInt64Array>();
    expectTypeOf<Tensor<'FP16'>['data']>().toEqualTypeOf<Uint16Array>();
    expectTypeOf<Tensor<'BOOL'>['data']>().toEqualTypeOf<Uint8Array>();
    expectTypeOf<Tensor<'BYTES'>['data']>().toEqualTypeOf<Buffer[]>();
    expectTypeOf<Tensor<'FP32', 'pinned'>['data']>().toEqualTypeOf<HostBuffer>();
    expectTypeOf<Tensor<'FP32', 'gpu'>['data']>().toEqualTypeOf<CudaBuffer>();
    expectTypeOf<Tensor<'FP32'>['datatype']>().toEqualTypeOf<'FP32'>();
    expectTypeOf<TensorDataOf<'UINT8'>>().toEqualTypeOf<Uint8Array>();
  });

  it('a plain Tensor may hold any data, in any memory', () => {
    expectTypeOf<Tensor['data']>().toEqualTypeOf<Exclude<TensorData, Uint8ClampedArray>>();
    expectTypeOf<Tensor['memoryType']>().toEqualTypeOf<'cpu' | 'pinned' | 'gpu'>();
    // @ts-expect-error: the general union is not a Float32Array
    const f: Float32Array = ({} as Tensor).data;
    void f;
  });
});

describe('server.model<Spec>()', () => {
  const model = server.model<Classifier>('classifier');

  it('types inputs by name and datatype', () => {
    expectTypeOf(model).toEqualTypeOf<Model<Classifier>>();
    void model.infer({ inputs: { IMAGE: new Float32Array(4), TEXT: ['a'] } });
    void model.infer({
      inputs: { IMAGE: { data: new Float32Array(4), shape: [1, 4] }, TEXT: ['a'], MASK: [true] },
    });
    void model.infer({ inputs: { IMAGE: { data: pinned, shape: [1, 4] }, TEXT: [new Uint8Array(1)] } });
    // @ts-expect-error: a misspelt input name
    void model.infer({ inputs: { IMAGES: new Float32Array(4), TEXT: ['a'] } });
    // @ts-expect-error: a required input missing
    void model.infer({ inputs: { IMAGE: new Float32Array(4) } });
    // @ts-expect-error: the wrong array for the datatype (INT32 data for FP32)
    void model.infer({ inputs: { IMAGE: new Int32Array(4), TEXT: ['a'] } });
    // @ts-expect-error: the wrong datatype named in a tensor input
    void model.infer({ inputs: { IMAGE: { data: new Float32Array(4), datatype: 'FP16' }, TEXT: ['a'] } });
    // @ts-expect-error: numbers are no BYTES elements
    void model.infer({ inputs: { IMAGE: new Float32Array(4), TEXT: [1, 2] } });
  });

  it('types each output by datatype, present without `!`', async () => {
    const r = await model.infer({ inputs: { IMAGE: new Float32Array(4), TEXT: ['a'] } });
    expectTypeOf(r.outputs.SCORES.data).toEqualTypeOf<Float32Array>();
    expectTypeOf(r.outputs.LABELS.data).toEqualTypeOf<Buffer[]>();
    expectTypeOf(r.outputs.IDS.data).toEqualTypeOf<BigInt64Array>();
    const scores: Float32Array = r.outputs.SCORES.data;
    void scores;
    // @ts-expect-error: a misspelt output name
    void r.outputs.SCORE;
    // @ts-expect-error: an output of another datatype
    const wrong: Int32Array = r.outputs.IDS.data;
    void wrong;
  });

  it('narrows the outputs to those asked for', async () => {
    const listed = await model.infer({
      inputs: { IMAGE: new Float32Array(4), TEXT: ['a'] },
      outputs: ['SCORES'],
    });
    expectTypeOf(listed.outputs).toEqualTypeOf<{ SCORES: Tensor<'FP32', 'cpu'> }>();
    // @ts-expect-error: not asked for
    void listed.outputs.LABELS;
    // @ts-expect-error: not an output of the model
    void model.infer({ inputs: { IMAGE: new Float32Array(4), TEXT: ['a'] }, outputs: ['SCORE'] });
  });

  it("follows the memory asked for: per output, or the request's outputMemory", async () => {
    const r = await model.infer({
      inputs: { IMAGE: new Float32Array(4), TEXT: ['a'] },
      outputs: { SCORES: { memory: 'pinned' }, IDS: { into: device }, LABELS: true },
    });
    expectTypeOf(r.outputs.SCORES.data).toEqualTypeOf<HostBuffer>();
    expectTypeOf(r.outputs.IDS.data).toEqualTypeOf<CudaBuffer>();
    expectTypeOf(r.outputs.LABELS.data).toEqualTypeOf<Buffer[]>();
    const g = await model.infer({
      inputs: { IMAGE: new Float32Array(4), TEXT: ['a'] },
      outputMemory: { type: 'gpu', device: 1 },
    });
    expectTypeOf(g.outputs.SCORES.data).toEqualTypeOf<CudaBuffer>();
    expectTypeOf(g.outputs.SCORES.memoryType).toEqualTypeOf<'gpu'>();
  });

  it('types streamed results the same way', async () => {
    const stream = model.stream({ inputs: { IMAGE: new Float32Array(4), TEXT: ['a'] }, outputs: ['IDS'] });
    for await (const r of stream) {
      expectTypeOf(r.outputs.IDS.data).toEqualTypeOf<BigInt64Array>();
    }
  });

  it('an untyped model keeps the general request and result', async () => {
    const plain = server.model('anything');
    const r = await plain.infer({ inputs: { ANY: new Float32Array(1) } });
    expectTypeOf(r).toEqualTypeOf<InferResult>();
    expectTypeOf(plain.stream({ inputs: {} })).toEqualTypeOf<InferStream<InferResult>>();
    expectTypeOf(r.outputs.ANY).toEqualTypeOf<Tensor | undefined>();
  });
});
