// parseModelConfig / formatModelConfig: config.pbtxt text read into the JSON
// form and written back without loss; errors say where.
import { readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MODELS } from '@triton-node/test-support/helpers.js';
import { describe, expect, it } from 'vitest';
import { type ModelConfig, formatModelConfig, parseModelConfig } from '../../lib/index.js';

/** The repository (its bench/models are checked too; ../shared beside it holds the reference configs). */
const ROOT = fileURLToPath(new URL('../../../..', import.meta.url));

/** Every config.pbtxt of the repository's test and example model folders that parses. */
function configFiles(): string[] {
  const dirs = [MODELS, join(ROOT, 'bench/models')];
  const out: string[] = [];
  for (const dir of dirs) {
    for (const model of readdirSync(dir)) {
      const file = join(dir, model, 'config.pbtxt');
      try {
        readFileSync(file);
      } catch {
        continue;
      }
      if (model !== 'bad_config') out.push(file);
    }
  }
  return out;
}

/** Triton's JSON writes some 64-bit integers as strings; the text form has one way to write a number. */
function numbersOf(value: unknown, key = ''): unknown {
  if (Array.isArray(value)) return value.map((v) => numbersOf(v, key));
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, numbersOf(v, k)]));
  }
  if (typeof value === 'string' && /^-?\d+$/.test(value) && !['name', 'string_value', 'key'].includes(key)) {
    return Number(value);
  }
  return value;
}

describe('formatModelConfig(parseModelConfig(text))', () => {
  const files = configFiles();

  it('finds the configs to check', () => {
    expect(files.length).toBeGreaterThan(15);
  });

  it.each(files.map((f) => [relative(ROOT, f)]))('%s round-trips', (file) => {
    const config = parseModelConfig(readFileSync(join(ROOT, file), 'utf8'));
    const text = formatModelConfig(config);
    expect(parseModelConfig(text)).toEqual(config);
    // Writing the result again gives the same text.
    expect(formatModelConfig(parseModelConfig(text))).toBe(text);
  });
});

describe('the reference configs of a real Triton (its JSON with every default filled in)', () => {
  const dir = join(ROOT, '..', 'shared', 'reference', 'real-triton-r25.07');
  let names: string[] = [];
  try {
    // Model configs only (some files there record a probe's steps around one).
    names = readdirSync(dir).filter(
      (n) =>
        n.startsWith('model-config.') &&
        n.endsWith('.json') &&
        typeof (JSON.parse(readFileSync(join(dir, n), 'utf8')) as { name?: unknown }).name === 'string',
    );
  } catch {
    // Not in this checkout: the repository's own configs above still run.
  }
  it.skipIf(names.length > 0)('(no reference folder beside this checkout: skipped)', () => {});
  it.each(names.map((n) => [n]))('%s round-trips through the text form', (name) => {
    const json = JSON.parse(readFileSync(join(dir, name), 'utf8')) as ModelConfig;
    const text = formatModelConfig(json);
    expect(parseModelConfig(text)).toEqual(numbersOf(json));
  });
});

describe('a known config written as text', () => {
  it('writes enums bare, strings quoted, lists in brackets and maps as entries', () => {
    const text = formatModelConfig({
      name: 'm',
      backend: 'identity',
      max_batch_size: 8,
      input: [{ name: 'IN', data_type: 'TYPE_FP32', dims: [-1, 3] }],
      dynamic_batching: {
        preferred_batch_size: [4, 8],
        priority_queue_policy: { '2': { timeout_action: 'DELAY' } },
      },
      parameters: { execute_delay_ms: { string_value: '10' } },
      instance_group: [],
    });
    expect(text).toBe(
      [
        'name: "m"',
        'backend: "identity"',
        'max_batch_size: 8',
        'input [',
        '  {',
        '    name: "IN"',
        '    data_type: TYPE_FP32',
        '    dims: [ -1, 3 ]',
        '  }',
        ']',
        'dynamic_batching {',
        '  preferred_batch_size: [ 4, 8 ]',
        '  priority_queue_policy {',
        '    key: 2',
        '    value {',
        '      timeout_action: DELAY',
        '    }',
        '  }',
        '}',
        'parameters {',
        '  key: "execute_delay_ms"',
        '  value {',
        '    string_value: "10"',
        '  }',
        '}',
        'instance_group: []',
        '',
      ].join('\n'),
    );
  });

  it('quotes and escapes strings', () => {
    const config = { name: 'a "quoted"\\name\n', default_model_filename: '42' };
    const text = formatModelConfig(config);
    expect(text).toContain('default_model_filename: "42"');
    expect(parseModelConfig(text)).toEqual(config);
  });
});

describe('errors', () => {
  it('say the line and column', () => {
    expect(() =>
      parseModelConfig('name: "x"\nmax_batch_size: 8\ninput [ { name: "A" data_type: TYPE_FP32 }\n'),
    ).toThrow(/line 4, column 1: missing '\]' after input/);
    expect(() => parseModelConfig('name: "x"\n  backend: @')).toThrow(
      /line 2, column 12: unexpected character '@'/,
    );
    expect(() => parseModelConfig('name: "x\n')).toThrow(SyntaxError);
  });

  it('name what cannot be written', () => {
    expect(() => formatModelConfig(null as never)).toThrow(TypeError);
    expect(() => formatModelConfig({ max_batch_size: Number.NaN })).toThrow(/max_batch_size/);
    expect(() => formatModelConfig({ 'bad key': 1 } as never)).toThrow(
      /'bad key' is not a config field name/,
    );
  });
});
