/**
 * `triton-node serve --trace-config ...`: tritonserver r25.07's flag
 * (src/command_line_parser.cc ParseTraceConfigOption and the Set*TraceArgs
 * that read it), as the gateway's `trace` option. `<setting>=<value>` sets
 * a global setting (level, rate, count, mode), `triton,<setting>=<value>`
 * one of the triton mode (file, log-frequency). Levels add up, and any OFF
 * turns tracing off, as there.
 * @internal
 */
import type { TraceOptions } from '../index.js';

const FORMAT = "--trace-config option format is '<trace mode>,<setting>=<value>'.";
const INT32_MAX = 2 ** 31 - 1;

type Level = 'OFF' | 'TIMESTAMPS' | 'TENSORS';

/** tritonserver's ParseTraceLevelOption (any case). */
function levelOf(value: string): Level {
  const v = value.toLowerCase();
  if (v === 'false' || v === 'off') return 'OFF';
  if (['true', 'on', 'min', 'max', 'timestamps'].includes(v)) return 'TIMESTAMPS';
  if (v === 'tensors') return 'TENSORS';
  throw new Error(`invalid value for trace level option: ${v}`);
}

/** tritonserver's ParseTraceModeOption (any case). */
function modeOf(value: string): 'triton' | 'opentelemetry' {
  const v = value.toLowerCase();
  if (v === 'triton' || v === 'opentelemetry') return v;
  throw new Error(
    `invalid value for trace mode option: ${v}. Available options are "triton" and "opentelemetry"`,
  );
}

/** A whole number from `min` to the int range of tritonserver's ParseOption<int>. */
function integer(value: string, min: number): number {
  const n = /^[+-]?\d+$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isSafeInteger(n) || n < min || n > INT32_MAX)
    throw new Error(`expected an integer from ${min} to ${INT32_MAX}, got '${value}'`);
  return n;
}

/** One flag's value split as tritonserver splits it: [mode ('' global), setting, value]. */
function split(arg: string): [string, string, string] {
  const comma = arg.indexOf(',');
  if (comma === 0)
    throw new Error(
      `No trace mode specified. --trace-config option format is <trace mode>,<setting>=<value> or <setting>=<value>. Got ${arg}`,
    );
  const mode = comma > 0 ? modeOf(arg.slice(0, comma)) : '';
  const eq = arg.indexOf('=', comma + 1);
  if (eq < 0) throw new Error(`${FORMAT} Got ${arg}`);
  const setting = arg.slice(comma + 1, eq);
  const value = arg.slice(eq + 1);
  if (setting === '' || value === '') throw new Error(`${FORMAT} Got ${arg}`);
  return [mode, setting, value];
}

const OTEL_SETTINGS =
  "serve's opentelemetry mode sends spans through the OpenTelemetry SDK this process registers (for example node --require @opentelemetry/auto-instrumentations-node/register, with OTEL_EXPORTER_OTLP_ENDPOINT): it has no exporter settings of its own";

/**
 * The gateway's `trace` option: `base` (the config file's) with each
 * `--trace-config` flag on top. Throws an Error whose message says what is
 * wrong, in tritonserver's words where it has them.
 */
export function traceOptionsOf(flags: string[], base: TraceOptions | undefined): TraceOptions {
  const out: TraceOptions = { ...(base ?? {}) };
  const levels = new Set<Level>();
  for (const arg of flags) {
    const [mode, setting, value] = split(arg);
    const where = mode === '' ? setting : `${mode},${setting}`;
    try {
      if (mode === '' && setting === 'level') levels.add(levelOf(value));
      else if (mode === '' && setting === 'rate') out.rate = integer(value, 0);
      else if (mode === '' && setting === 'count') out.count = integer(value, -1);
      else if (mode === '' && setting === 'mode') out.mode = modeOf(value);
      else if (mode === 'triton' && setting === 'file') out.file = value;
      else if (mode === 'triton' && setting === 'log-frequency') out.logFrequency = integer(value, 0);
      else if (mode === 'opentelemetry') throw new Error(OTEL_SETTINGS);
      else
        throw new Error(
          mode === ''
            ? 'the global settings are level, rate, count and mode'
            : 'the triton mode settings are file and log-frequency',
        );
    } catch (err) {
      throw new Error(`Bad option: "--trace-config ${where}". ${(err as Error).message}`);
    }
  }
  if (levels.has('OFF')) out.level = 'OFF';
  else if (levels.size > 0) out.level = [...levels] as ('TIMESTAMPS' | 'TENSORS')[];
  return out;
}
