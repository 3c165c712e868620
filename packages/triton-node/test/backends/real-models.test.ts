/**
 * test/backends/real-models.ts builds the real-model repository its configs describe:
 * each model's file linked from its npm package, the configs as written,
 * ocr_cls_auto left without a config for Triton's auto-complete.
 */
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  REAL_MODEL_NAMES,
  hasGpu,
  makeRealModelRepository,
  onnxRuntimeNode,
  realModelConfigs,
  realModelFiles,
} from '@triton-node/test-support/backends/real-models.js';
import { skipAllIf } from '@triton-node/test-support/helpers.js';
import { afterAll, describe, expect, it } from 'vitest';
import { parseModelConfig } from '../../lib/index.js';

const files = realModelFiles();
const dir = mkdtempSync(join(tmpdir(), 'triton-real-models-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the real-model repository', () => {
  skipAllIf(typeof files === 'string' ? files : false);

  it('links each model file and writes the configs as given', () => {
    if (typeof files === 'string') return;
    const options = {
      instances: 3,
      intraOpThreads: 2,
      interOpThreads: 1,
      maxQueueDelayMicroseconds: 1500,
      maxSequenceIdleMicroseconds: 250_000,
      perModel: { ocr_cls: { instances: 2 } },
    };
    makeRealModelRepository(dir, options);
    const expected = {
      ocr_det: files.ocrDet,
      ocr_cls: files.ocrCls,
      ocr_cls_auto: files.ocrCls,
      silero_vad: files.sileroVad,
    };
    for (const name of REAL_MODEL_NAMES) {
      expect(realpathSync(join(dir, name, '1', 'model.onnx'))).toBe(realpathSync(expected[name]));
    }
    const autoConfig = join(dir, 'ocr_cls_auto', 'config.pbtxt');
    if (hasGpu()) expect(readFileSync(autoConfig, 'utf8')).toBe('instance_group [ { kind: KIND_CPU } ]\n');
    else expect(existsSync(autoConfig)).toBe(false);
    const configs = realModelConfigs(options);
    for (const name of ['ocr_det', 'ocr_cls', 'silero_vad'] as const) {
      const written = parseModelConfig(readFileSync(join(dir, name, 'config.pbtxt'), 'utf8'));
      expect(written).toEqual(configs[name]);
    }
    const det = configs.ocr_det;
    expect(det.max_batch_size).toBe(8);
    expect(det.input?.[0]).toEqual({ name: 'x', data_type: 'TYPE_FP32', dims: [3, -1, -1] });
    expect(det.output?.[0]).toEqual({ name: 'sigmoid_0.tmp_0', data_type: 'TYPE_FP32', dims: [1, -1, -1] });
    expect(det.dynamic_batching?.max_queue_delay_microseconds).toBe(1500);
    expect(det.instance_group).toEqual([{ kind: 'KIND_CPU', count: 3 }]);
    expect(det.parameters).toEqual({
      intra_op_thread_count: { string_value: '2' },
      inter_op_thread_count: { string_value: '1' },
    });
    expect(configs.ocr_cls.max_batch_size).toBe(32);
    expect(configs.ocr_cls.instance_group).toEqual([{ kind: 'KIND_CPU', count: 2 }]);
    expect(configs.ocr_cls.input?.[0]?.dims).toEqual([3, 48, 192]);
    const vad = configs.silero_vad;
    expect(vad.max_batch_size).toBe(0);
    expect(vad.sequence_batching?.max_sequence_idle_microseconds).toBe(250_000);
    expect(vad.sequence_batching?.state?.map((s) => [s.input_name, s.output_name, s.dims])).toEqual([
      ['h', 'hn', [2, 1, 64]],
      ['c', 'cn', [2, 1, 64]],
    ]);
    expect(vad.input?.map((i) => [i.name, i.data_type, i.dims])).toEqual([
      ['input', 'TYPE_FP32', [-1, -1]],
      ['sr', 'TYPE_INT64', [1]],
    ]);
  });

  it("finds onnxruntime-node's libonnxruntime.so.1", () => {
    expect(onnxRuntimeNode()).toMatch(/onnxruntime-node\/bin\/.*\/libonnxruntime\.so\.1$/);
  });

  it('writes only the models asked for, with the defaults', () => {
    const only = mkdtempSync(join(tmpdir(), 'triton-real-models-'));
    try {
      makeRealModelRepository(only, { models: ['silero_vad'] });
      expect(existsSync(join(only, 'ocr_det'))).toBe(false);
      const vad = parseModelConfig(readFileSync(join(only, 'silero_vad', 'config.pbtxt'), 'utf8'));
      expect(vad.instance_group).toEqual([{ kind: 'KIND_CPU', count: 4 }]);
      expect(vad.parameters?.intra_op_thread_count).toEqual({ string_value: '1' });
    } finally {
      rmSync(only, { recursive: true, force: true });
    }
  });
});
