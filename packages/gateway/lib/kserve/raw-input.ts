/**
 * Raw binary inference requests (Triton's binary tensor data extension with
 * `Inference-Header-Content-Length: 0`): the body is nothing but the bytes of
 * the model's only input, and every output comes back as binary data.
 *
 * tritonserver hands such a body to its core as a "raw input", whose name,
 * datatype and shape the core deduces from the model's config; the library
 * takes named tensors, so the gateway deduces them here as the core does
 * (test/fixtures/real-triton-r25.07/wire-answers.json holds the core's
 * answers, recorded), with the core's words for what cannot be deduced.
 */
import type { DataType, ModelConfig } from 'triton-node';
import { elementSize } from 'triton-node';
import { badRequest } from '../errors.js';
import { type DecodedInfer, binaryData } from './codec.js';

/** The name tritonserver gives the raw input, which the core's byte-size message keeps. */
const RAW_INPUT_NAME = 'raw_input';

/** The prefix of the core's messages for a request without an id (a raw request never has one). */
const NO_ID = '[request id: <id_unknown>] ';

/** Triton's datatype of a config's `TYPE_*` (TYPE_STRING is BYTES). */
function datatypeOf(configType: string | undefined): DataType {
  const t = (configType ?? '').replace(/^TYPE_/, '');
  return (t === 'STRING' ? 'BYTES' : t) as DataType;
}

/** The request the core makes of a raw body for `config`'s model. */
export function decodeRawInferRequest(body: Buffer, model: string, config: ModelConfig): DecodedInfer {
  const inputs = config.input ?? [];
  if (inputs.length !== 1) {
    throw badRequest(
      `${NO_ID}Raw request must only have 1 input (found 1) to be deduced but got ${inputs.length} inputs in '${model}' model configuration`,
    );
  }
  const input = inputs[0]!;
  const name = input.name ?? '';
  const datatype = datatypeOf(input.data_type);
  const dims = (input.dims ?? []).map(Number);
  const shape = (config.max_batch_size ?? 0) > 0 ? [1, ...dims] : [...dims];
  const variable = shape.flatMap((d, i) => (d === -1 ? [i] : []));
  const known = shape.reduce((n, d) => (d === -1 ? n : n * d), 1);
  if (datatype === 'BYTES') {
    if (variable.length > 0 || known !== 1) {
      throw badRequest(`${NO_ID}For BYTE datatype raw input '${name}', the model must have input shape [1]`);
    }
    // The core prepends the element's length: one element, the whole body.
    const element = Buffer.allocUnsafe(4 + body.length);
    element.writeUInt32LE(body.length, 0);
    body.copy(element, 4);
    return request(name, { data: binaryData(element, 'BYTES'), shape, datatype });
  }
  if (variable.length > 1) {
    throw badRequest(
      `${NO_ID}The shape of the raw input '${name}' can not be deduced because there are more than one variable-sized dimension`,
    );
  }
  const size = elementSize(datatype);
  if (variable.length === 1 && known > 0) shape[variable[0]!] = Math.floor(body.length / known / size);
  const expected = shape.reduce((n, d) => n * d, 1) * size;
  if (expected !== body.length) {
    throw badRequest(
      `${NO_ID}input byte size mismatch for input '${RAW_INPUT_NAME}' for model '${model}'. Expected ${expected}, got ${body.length}`,
    );
  }
  return request(name, { data: binaryData(body, datatype), shape, datatype });
}

function request(name: string, tensor: DecodedInfer['request']['inputs'][string]): DecodedInfer {
  // Every output, as binary data: tritonserver's default for a raw request.
  return { request: { inputs: { [name]: tensor } }, outputs: undefined, binaryByDefault: true };
}
