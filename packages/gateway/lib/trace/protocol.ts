/**
 * The trace extension over HTTP (`GET|POST /v2[/models/{model}]/trace/setting`)
 * and gRPC (`TraceSetting`): the request read and refused as tritonserver
 * r25.07 reads and refuses it (src/http_server.cc HandleTrace,
 * src/grpc/grpc_server.cc TraceSetting), then the settings of the model (or
 * the global ones) answered.
 */
import type { Server } from 'triton-node';
import { GatewayError } from '../errors.js';
import {
  TraceSettingError,
  type TraceSettings,
  type TraceSettingsDocument,
  type TraceUpdate,
} from './settings.js';

type Numeric = 'rate' | 'count' | 'logFrequency';
const NAMES: Record<Numeric, string> = {
  rate: 'trace_rate',
  count: 'trace_count',
  logFrequency: 'log_frequency',
};
const INT32_MAX = 2 ** 31 - 1;

function invalid(message: string): TraceSettingError {
  return new TraceSettingError('INVALID_ARG', message);
}

/** std::stoi of `text` as tritonserver parses a setting (a prefix of digits; int range). */
function stoi(name: string, text: string, range: string): number {
  const m = /^\s*([+-]?\d+)/.exec(text);
  if (m === null) throw invalid(`Unable to parse '${name}', got: ${text}`);
  const n = Number(m[1]);
  if (n > INT32_MAX || n < -INT32_MAX - 1)
    throw invalid(`Unable to parse '${name}', value is out of range ${range}, got: ${text}`);
  return n;
}

/** One numeric setting's value from its text (grpc: the message's wording of the count's lower bound). */
function numeric(field: Numeric, text: string, grpc: boolean): number {
  const name = NAMES[field];
  if (field === 'count') {
    const n = stoi(name, text, `[ -1, ${INT32_MAX} ]`);
    if (n < -1)
      throw invalid(`Unable to parse '${name}'. Expecting value >= -1, got:${grpc ? ' ' : ''}${text}`);
    return n;
  }
  // A negative value wraps to uint32, as it does in tritonserver.
  return stoi(name, text, '[ 0, 4294967295 ]') >>> 0;
}

/** The level bits of a list of level names (unknown names are ignored; undefined: none known). */
function levelOf(names: string[]): number | undefined {
  let level: number | undefined;
  for (const name of names) {
    if (name === 'OFF') {
      if (names.length !== 1) throw invalid("Expect only one trace level 'OFF' is specified");
      level = 0;
    } else if (name === 'TIMESTAMPS') level = (level ?? 0) | 4;
    else if (name === 'TENSORS') level = (level ?? 0) | 8;
  }
  return level;
}

const NON_STRING = 'attempt to access JSON non-string as string';

/** A settings update from an HTTP request's JSON body. */
export function updateFromJson(body: Record<string, unknown>): TraceUpdate {
  if ('trace_file' in body)
    throw new TraceSettingError(
      'UNSUPPORTED',
      'trace file location can not be updated through network protocol',
    );
  const update: TraceUpdate = {};
  if ('trace_level' in body) {
    const v = body.trace_level;
    if (v === null) update.level = null;
    else {
      if (!Array.isArray(v))
        throw new TraceSettingError('INTERNAL', 'attempt to access JSON non-array as array');
      for (const s of v) if (typeof s !== 'string') throw new TraceSettingError('INTERNAL', NON_STRING);
      const level = levelOf(v as string[]);
      if (level !== undefined) update.level = level;
    }
  }
  for (const field of ['rate', 'count', 'logFrequency'] as const) {
    const name = NAMES[field];
    if (!(name in body)) continue;
    const v = body[name];
    if (v === null) update[field] = null;
    else if (typeof v !== 'string') throw new TraceSettingError('INTERNAL', NON_STRING);
    else update[field] = numeric(field, v, false);
  }
  return update;
}

/** A settings update from a gRPC TraceSettingRequest's settings. */
export function updateFromGrpc(settings: Record<string, { value?: string[] }>): TraceUpdate {
  if ('trace_file' in settings)
    throw new TraceSettingError(
      'UNSUPPORTED',
      'trace file location can not be updated through network protocol',
    );
  const update: TraceUpdate = {};
  const values = (name: string) => settings[name]?.value ?? [];
  if ('trace_level' in settings) {
    const v = values('trace_level');
    if (v.length === 0) update.level = null;
    else {
      const level = levelOf(v);
      if (level !== undefined) update.level = level;
    }
  }
  for (const field of ['rate', 'count', 'logFrequency'] as const) {
    const name = NAMES[field];
    if (!(name in settings)) continue;
    const v = values(name);
    if (v.length === 0) update[field] = null;
    else if (v.length !== 1) throw invalid(`expect only 1 value for '${name}'`);
    else update[field] = numeric(field, v[0]!, true);
  }
  return update;
}

const STATUS = { INVALID_ARG: 400, UNSUPPORTED: 501, INTERNAL: 500 } as const;

/** A refused setting as the gateway answers it (HTTP status as tritonserver's, gRPC by code). */
export function asGatewayError(err: unknown): unknown {
  if (!(err instanceof TraceSettingError)) return err;
  return new GatewayError(STATUS[err.code], err.message, err.code);
}

/**
 * Reads or updates the settings of `model` ('' for the global ones): a model
 * that is not ready is refused as tritonserver refuses it.
 */
export async function traceSetting(
  server: Server,
  settings: TraceSettings,
  model: string,
  update: (() => TraceUpdate) | undefined,
): Promise<TraceSettingsDocument> {
  try {
    if (
      model !== '' &&
      !(await server
        .model(model)
        .isReady()
        .catch(() => false))
    ) {
      throw invalid(`Request for unknown model : ${model}`);
    }
    if (update !== undefined) settings.update(model, update());
    return settings.document(model);
  } catch (err) {
    throw asGatewayError(err);
  }
}

/** The gRPC TraceSettingResponse of a settings document. */
export function grpcSettings(doc: TraceSettingsDocument): { settings: Record<string, { value: string[] }> } {
  const settings: Record<string, { value: string[] }> = {};
  for (const [k, v] of Object.entries(doc)) settings[k] = { value: Array.isArray(v) ? v : [v] };
  return { settings };
}
