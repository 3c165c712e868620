/**
 * The logging extension over HTTP (`GET|POST /v2/logging`) and gRPC
 * (`LogSettings`): Triton's logger read and changed as tritonserver r25.07
 * reads and changes it (src/http_server.cc HandleLogging,
 * src/grpc/grpc_server.cc RegisterLogging). Each setting is applied as it is
 * read, in tritonserver's order, so a refused one leaves those before it
 * applied, as there. The logger is the library's, one per process
 * (`server.updateLogSettings()`).
 */
import type { LogSettings, LogSettingsUpdate, Server } from 'triton-node';
import { GatewayError } from '../errors.js';

/** The settings as the HTTP protocol answers them. */
export interface LogSettingsDocument {
  log_file: string;
  log_info: boolean;
  log_warning: boolean;
  log_error: boolean;
  log_verbose_level: number;
  log_format: 'default' | 'ISO8601';
}

/** One gRPC LogSettingsResponse / LogSettingsRequest value (proto-loader, oneofs: true). */
export interface GrpcLogValue {
  parameter_choice?: 'bool_param' | 'uint32_param' | 'string_param';
  bool_param?: boolean;
  uint32_param?: number;
  string_param?: string;
}

export function logDocument(s: LogSettings): LogSettingsDocument {
  return {
    log_file: s.file,
    log_info: s.info,
    log_warning: s.warn,
    log_error: s.error,
    log_verbose_level: s.verbose,
    log_format: s.format === 'iso8601' ? 'ISO8601' : 'default',
  };
}

/** The gRPC LogSettingsResponse of the settings. */
export function grpcLogSettings(s: LogSettings): { settings: Record<string, GrpcLogValue> } {
  const doc = logDocument(s);
  return {
    settings: {
      log_file: { string_param: doc.log_file },
      log_info: { bool_param: doc.log_info },
      log_warning: { bool_param: doc.log_warning },
      log_error: { bool_param: doc.log_error },
      log_verbose_level: { uint32_param: doc.log_verbose_level },
      log_format: { string_param: doc.log_format },
    },
  };
}

const FILE_FIXED = 'log file location can not be updated through network protocol';
const FLAGS = [
  ['log_info', 'info'],
  ['log_warning', 'warn'],
  ['log_error', 'error'],
] as const;

/**
 * tritonserver's verbose level from a JSON unsigned integer: cast to int32,
 * then a negative one kept as 0 (LOG_SET_VERBOSE).
 */
function verboseOf(n: number): number {
  const int32 = Number(BigInt.asIntN(32, BigInt(n)));
  return Math.max(0, int32);
}

/** 'default' or 'ISO8601' as the library names them (undefined: neither). */
function formatOf(text: string): LogSettingsUpdate['format'] | undefined {
  if (text === 'ISO8601') return 'iso8601';
  if (text === 'default') return 'default';
  return undefined;
}

/**
 * Applies an HTTP request's JSON body (HandleLogging): null values are
 * skipped; a value of the wrong JSON type is INTERNAL (TritonJson's words),
 * an unknown format UNAVAILABLE, a log file UNSUPPORTED.
 */
export function updateFromJson(server: Server, body: Record<string, unknown>): void {
  const apply = (update: LogSettingsUpdate) => server.updateLogSettings(update);
  if ('log_file' in body && body.log_file !== null) throw new GatewayError(501, FILE_FIXED, 'UNSUPPORTED');
  for (const [name, key] of FLAGS) {
    const v = body[name];
    if (v === undefined || v === null) continue;
    if (typeof v !== 'boolean')
      throw new GatewayError(500, 'attempt to access JSON non-boolean as boolean', 'INTERNAL');
    apply({ [key]: v });
  }
  const level = body.log_verbose_level;
  if (level !== undefined && level !== null) {
    if (typeof level !== 'number' || !Number.isInteger(level) || level < 0 || level >= 2 ** 64)
      throw new GatewayError(
        500,
        'attempt to access JSON non-unsigned-integer as unsigned-integer',
        'INTERNAL',
      );
    apply({ verbose: verboseOf(level) });
  }
  const format = body.log_format;
  if (format !== undefined && format !== null) {
    if (typeof format !== 'string')
      throw new GatewayError(500, 'attempt to access JSON non-string as string', 'INTERNAL');
    const known = formatOf(format);
    if (known === undefined)
      throw new GatewayError(503, `invalid argument for --log_format, got: ${format}`, 'UNAVAILABLE');
    apply({ format: known });
  }
}

/**
 * Applies a gRPC LogSettingsRequest's settings (RegisterLogging): any
 * log_file is UNSUPPORTED; a value of the wrong kind, or an unknown format,
 * INVALID_ARG.
 */
export function updateFromGrpc(server: Server, settings: Record<string, GrpcLogValue>): void {
  const apply = (update: LogSettingsUpdate) => server.updateLogSettings(update);
  const expect = (name: string, kind: string) =>
    new GatewayError(400, `expect ${kind} for '${name}'`, 'INVALID_ARG');
  if ('log_file' in settings) throw new GatewayError(501, FILE_FIXED, 'UNSUPPORTED');
  for (const [name, key] of FLAGS) {
    const v = settings[name];
    if (v === undefined) continue;
    if (v.parameter_choice !== 'bool_param') throw expect(name, 'boolean');
    apply({ [key]: v.bool_param === true });
  }
  const level = settings.log_verbose_level;
  if (level !== undefined) {
    if (level.parameter_choice !== 'uint32_param') throw expect('log_verbose_level', 'int32');
    apply({ verbose: verboseOf(level.uint32_param ?? 0) });
  }
  const format = settings.log_format;
  if (format !== undefined) {
    if (format.parameter_choice !== 'string_param') throw expect('log_format', 'string');
    const text = format.string_param ?? '';
    const known = formatOf(text);
    if (known === undefined)
      throw new GatewayError(400, `invalid argument for log_format, got: ${text}`, 'INVALID_ARG');
    apply({ format: known });
  }
}
