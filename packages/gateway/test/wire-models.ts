/**
 * The models of the wire-answer cases (wire-answers.test.ts and the recorder
 * wire-record.ts), written into a repository of their own: the shapes of the
 * models NVIDIA's L0_http qa tests send raw binary requests to, and one with
 * a queue of one request that waits a second for its batch.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const identity = (name: string, inputs: Array<[string, string]>, extra = ''): string => {
  const tensors = (kind: 'INPUT' | 'OUTPUT') =>
    inputs.map(([type, dims], i) => `{ name: "${kind}${i}" data_type: ${type} dims: ${dims} }`).join(', ');
  return `name: "${name}"
backend: "identity"
max_batch_size: 8
input [ ${tensors('INPUT')} ]
output [ ${tensors('OUTPUT')} ]
instance_group [ { count: 1 kind: KIND_CPU } ]
${extra}`;
};

/** Each model's config.pbtxt. */
export const WIRE_MODELS: Record<string, string> = {
  raw_fp32: identity('raw_fp32', [['TYPE_FP32', '[ -1 ]']]),
  raw_bytes_one: identity('raw_bytes_one', [['TYPE_STRING', '[ 1 ]']]),
  raw_bytes: identity('raw_bytes', [['TYPE_STRING', '[ -1 ]']]),
  raw_fp16_2d: identity('raw_fp16_2d', [['TYPE_FP16', '[ -1, -1 ]']]),
  raw_three: identity('raw_three', [
    ['TYPE_FP32', '[ -1 ]'],
    ['TYPE_FP32', '[ -1 ]'],
    ['TYPE_FP32', '[ -1 ]'],
  ]),
  int64_identity: identity('int64_identity', [['TYPE_INT64', '[ -1 ]']]),
  // L0_http's onnx_zero_1_float32_queue: the first request waits up to 1 s
  // for a batch of 8; the queue holds one.
  queue_one: identity(
    'queue_one',
    [['TYPE_FP32', '[ -1 ]']],
    `dynamic_batching {
  max_queue_delay_microseconds: 1000000
  preferred_batch_size: [ 8 ]
  default_queue_policy { max_queue_size: 1 }
}`,
  ),
};

/** Writes the models into `dir` (a repository), each with an empty version 1. */
export function writeWireModels(dir: string): string {
  for (const [name, config] of Object.entries(WIRE_MODELS)) {
    mkdirSync(join(dir, name, '1'), { recursive: true });
    writeFileSync(join(dir, name, '1', '.keep'), '');
    writeFileSync(join(dir, name, 'config.pbtxt'), config);
  }
  return dir;
}
