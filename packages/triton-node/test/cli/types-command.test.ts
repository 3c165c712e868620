// `triton-node types` (modelTypes): specs written from the test repository's
// configs, then compiled with code that uses them: right names and
// datatypes compile, wrong ones do not.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MODELS } from '@triton-node/test-support/helpers.js';
import ts from 'typescript';
import { afterAll, describe, expect, it } from 'vitest';
import { typesCommand } from '../../lib/cli/commands/types.js';
import { modelTypes } from '../../lib/index.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'triton-node-types-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Compiles `files` (name → text) in `dir` with the project's settings; the diagnostics, as "file(line): message". */
function compile(files: Record<string, string>): string[] {
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  const options: ts.CompilerOptions = {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    lib: ['lib.es2023.d.ts', 'lib.esnext.disposable.d.ts'],
    types: ['node'],
    typeRoots: [join(ROOT, '../../node_modules/@types')],
    strict: true,
    noEmit: true,
    skipLibCheck: true,
  };
  const program = ts.createProgram(
    Object.keys(files).map((f) => join(dir, f)),
    options,
  );
  return ts
    .getPreEmitDiagnostics(program)
    .filter((d) => d.file === undefined || d.file.fileName.startsWith(dir))
    .map((d) => {
      const where = d.file
        ? `${d.file.fileName.slice(dir.length + 1)}(${d.file.getLineAndCharacterOfPosition(d.start!).line + 1})`
        : '';
      return `${where}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n').split('\n')[0]}`;
    });
}

describe('modelTypes(): specs from the configs', () => {
  const out = modelTypes(MODELS, { importFrom: join(ROOT, 'lib/index.js') });

  it('writes a spec per model with a readable config, and says why for the others', () => {
    expect(out.text).toContain('export interface IdentityFp32 extends ModelSpec {');
    expect(out.text).toMatch(/inputs: \{\n\s+INPUT0: 'FP32';\n\s+INPUT1\?: 'FP32';/); // identity_optional
    expect(out.text).toContain("INPUT12: 'BYTES';"); // TYPE_STRING
    expect(out.text).toContain("INPUT13: 'BF16';");
    expect(out.text).toContain('  identity_fp32: IdentityFp32;');
    const bad = out.models.find((m) => m.model === 'bad_config');
    expect(bad?.skipped).toBeTruthy();
    expect(out.text).toContain('//   bad_config: ');
    expect(out.models.find((m) => m.model === 'identity_fp32')).toMatchObject({ model: 'identity_fp32' });
    expect(out.models.find((m) => m.model === 'identity_fp32')?.skipped).toBeUndefined();
  });

  it('compiles, and types requests and results of the generated specs', () => {
    const use = [
      "import type { Server } from '" + join(ROOT, 'lib/index.js') + "';",
      "import type { Models } from './models.js';",
      'declare const server: Server;',
      'export async function ok(): Promise<void> {',
      "  const m = server.model<Models['identity_optional']>('identity_optional');",
      '  const r = await m.infer({ inputs: { INPUT0: new Float32Array(2) } });',
      '  const a: Float32Array = r.outputs.OUTPUT0.data;',
      '  const b: Float32Array = r.outputs.OUTPUT1.data;',
      "  const all = server.model<Models['identity_all_types']>('identity_all_types');",
      '  const t = await all.infer({ inputs: { INPUT0: [true], INPUT1: new Uint8Array(1), INPUT2: new Uint16Array(1), INPUT3: new Uint32Array(1), INPUT4: new BigUint64Array(1), INPUT5: new Int8Array(1), INPUT6: new Int16Array(1), INPUT7: new Int32Array(1), INPUT8: new BigInt64Array(1), INPUT9: new Uint16Array(1), INPUT10: new Float32Array(1), INPUT11: new Float64Array(1), INPUT12: ["x"], INPUT13: new Uint16Array(1) } });',
      '  const c: BigInt64Array = t.outputs.OUTPUT8.data;',
      '  const d: Buffer[] = t.outputs.OUTPUT12.data;',
      '  void [a, b, c, d];',
      '}',
      '',
    ].join('\n');
    const bad = [
      "import type { Server } from '" + join(ROOT, 'lib/index.js') + "';",
      "import type { Models } from './models.js';",
      'declare const server: Server;',
      'export async function bad(): Promise<void> {',
      "  const m = server.model<Models['identity_fp32']>('identity_fp32');",
      '  await m.infer({ inputs: { INPUT: new Float32Array(2) } });',
      '  await m.infer({ inputs: { INPUT0: new Int32Array(2) } });',
      '  const r = await m.infer({ inputs: { INPUT0: new Float32Array(2) } });',
      '  const e: Int32Array = r.outputs.OUTPUT0.data;',
      '  void r.outputs.OUTPUT1;',
      '  void e;',
      '}',
      '',
    ].join('\n');
    expect(compile({ 'models.d.ts': out.text, 'use.ts': use })).toEqual([]);
    const errors = compile({ 'models.d.ts': out.text, 'bad.ts': bad });
    // One error for each wrong line: the input name, the input datatype, the output datatype, the output name.
    expect(errors.map((e) => e.split(':')[0])).toEqual(['bad.ts(6)', 'bad.ts(7)', 'bad.ts(9)', 'bad.ts(10)']);
  });

  it('triton-node types writes the same text to --out; usage errors exit 2', () => {
    const file = join(dir, 'cli-models.d.ts');
    expect(typesCommand(['--repository', MODELS, '--out', file])).toBe(0);
    expect(readFileSync(file, 'utf8')).toBe(modelTypes(MODELS).text);
    expect(typesCommand([])).toBe(2);
    expect(typesCommand(['--repository', MODELS, '--bogus'])).toBe(2);
    expect(typesCommand(['--repository', join(dir, 'nope')])).toBe(2);
  });

  it('refuses a repository that does not exist, naming it', () => {
    expect(() => modelTypes(join(dir, 'nope'))).toThrow(/nope' is not a directory/);
  });
});
