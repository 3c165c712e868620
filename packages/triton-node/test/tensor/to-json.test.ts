import { useServer } from '@triton-node/test-support/helpers.js';
import { describe, expect, it } from 'vitest';
import { Tensor } from '../../lib/index.js';
import { bfloat16ToNumber, halfToNumber } from '../../lib/tensor/tensor.js';

const server = useServer(['identity_all_types', 'identity_fp32']);

describe('results as JSON', () => {
  it('every datatype comes out as plain values: numbers, booleans, strings where a number would lose digits', async () => {
    const r = await server().infer('identity_all_types', {
      inputs: {
        INPUT0: [true, false],
        INPUT1: Uint8Array.of(0, 255),
        INPUT2: Uint16Array.of(1, 65535),
        INPUT3: Uint32Array.of(4294967295),
        INPUT4: BigUint64Array.of(1n, 2n ** 64n - 1n),
        INPUT5: Int8Array.of(-128),
        INPUT6: Int16Array.of(-2),
        INPUT7: Int32Array.of(-3),
        INPUT8: BigInt64Array.of(-(2n ** 63n), 5n),
        INPUT9: Uint16Array.of(0x3c00, 0xc000, 0x0001, 0x7c00),
        INPUT10: Float32Array.of(1.5),
        INPUT11: Float64Array.of(0.1),
        INPUT12: ['héllo', 'x'],
        INPUT13: Uint16Array.of(0x3f80, 0xc040),
      },
    });
    const json = JSON.parse(JSON.stringify(r));
    const data = (name: string) => json.outputs[name].data;
    expect(data('OUTPUT0')).toEqual([true, false]);
    expect(data('OUTPUT1')).toEqual([0, 255]);
    expect(data('OUTPUT2')).toEqual([1, 65535]);
    expect(data('OUTPUT3')).toEqual([4294967295]);
    expect(data('OUTPUT4')).toEqual([1, '18446744073709551615']);
    expect(data('OUTPUT5')).toEqual([-128]);
    expect(data('OUTPUT6')).toEqual([-2]);
    expect(data('OUTPUT7')).toEqual([-3]);
    expect(data('OUTPUT8')).toEqual(['-9223372036854775808', 5]);
    // FP16: 1, -2, the smallest subnormal, +Infinity (null in JSON).
    expect(data('OUTPUT9')).toEqual([1, -2, 2 ** -24, null]);
    expect(data('OUTPUT10')).toEqual([1.5]);
    expect(data('OUTPUT11')).toEqual([0.1]);
    expect(data('OUTPUT12')).toEqual(['héllo', 'x']);
    expect(data('OUTPUT13')).toEqual([1, -3]);
    expect(json.outputs.OUTPUT12).toMatchObject({
      name: 'OUTPUT12',
      datatype: 'BYTES',
      shape: [2],
      memoryType: 'cpu',
    });
    expect(json).toMatchObject({ model: 'identity_all_types', version: 1, id: '' });
    expect(typeof json.parameters).toBe('object');
  });

  it('a result keeps its timing; a disposed tensor has no data', async () => {
    const r = await server().infer('identity_fp32', {
      inputs: { INPUT0: Float32Array.of(1, 2) },
      timing: true,
    });
    const json = r.toJSON();
    expect(json.outputs.OUTPUT0).toEqual({
      name: 'OUTPUT0',
      datatype: 'FP32',
      shape: [1, 2],
      memoryType: 'cpu',
      data: [1, 2],
    });
    expect(json.timing?.totalUs).toBeGreaterThanOrEqual(0);
    r.outputs.OUTPUT0!.dispose();
    expect(r.outputs.OUTPUT0!.toJSON()).toEqual({
      name: 'OUTPUT0',
      datatype: 'FP32',
      shape: [1, 2],
      memoryType: 'cpu',
    });
  });

  it('FP16 and BF16 bits decode to their values', () => {
    expect(halfToNumber(0x3555)).toBeCloseTo(1 / 3, 3);
    expect(halfToNumber(0x7bff)).toBe(65504);
    expect(halfToNumber(0x8000)).toBe(-0);
    expect(halfToNumber(0xfc00)).toBe(Number.NEGATIVE_INFINITY);
    expect(halfToNumber(0x7e00)).toBeNaN();
    expect(halfToNumber(0x0400)).toBe(2 ** -14);
    expect(bfloat16ToNumber(0x4049)).toBeCloseTo(3.140625, 6);
    expect(bfloat16ToNumber(0xff80)).toBe(Number.NEGATIVE_INFINITY);
    // A tensor made directly (as the server does) with FP16 data.
    const t = new Tensor('x', 'FP16', [2], Uint16Array.of(0x3c00, 0x4000), 'cpu', 0);
    expect(t.toJSON().data).toEqual([1, 2]);
  });
});
