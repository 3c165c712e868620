// `triton-node types` on a hostile repository (security review, issue 40,
// finding 3): config text written into generated comments — a backend or
// platform with `*/`, a skipped model's reason with a newline, U+2028 or a
// carriage return, a folder name or a repository path with a newline —
// must stay comment text. The generated module is parsed (only the type
// import and interfaces may be there), compiled to JavaScript and imported:
// none of the payloads, each of which would set a global, runs.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import ts from 'typescript';
import { afterAll, describe, expect, it } from 'vitest';
import { modelTypes } from '../../lib/index.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'triton-node-hostile-types-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Code that records that it ran: what each payload would do on import. */
const ran = (tag: string) => `(globalThis.__hostileTypes ??= []).push('${tag}');`;
const ranTags = () => (globalThis as { __hostileTypes?: string[] }).__hostileTypes ?? [];

// The repository path itself carries a newline.
const repo = join(dir, `repo\n${ran('repository path')}//`);
const io = (name = 'INPUT0', type = 'TYPE_FP32') =>
  `input [ { name: ${JSON.stringify(name)} data_type: ${type} dims: [ 1 ] } ]\noutput [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 1 ] } ]\n`;

function model(folder: string, config: string | undefined): void {
  mkdirSync(join(repo, folder, '1'), { recursive: true });
  if (config !== undefined) writeFileSync(join(repo, folder, 'config.pbtxt'), config);
}

model(
  'evil_backend',
  `name: "evil_backend"\nbackend: "identity */ ${ran('backend')} /*"\nmax_batch_size: 0\n${io()}`,
);
model(
  'evil_platform',
  `name: "evil_platform"\nplatform: "x\u2028*/ ${ran('platform')} /*"\nmax_batch_size: 0\n${io()}`,
);
// Skipped models: the reason (which quotes the input name) goes into a // comment.
model(
  'evil_reason_newline',
  `name: "evil_reason_newline"\nbackend: "identity"\n${io(`A\n${ran('reason newline')}//`, 'TYPE_NOPE')}`,
);
model(
  'evil_reason_ls',
  `name: "evil_reason_ls"\nbackend: "identity"\n${io(`A\u2028${ran('reason U+2028')}//`, 'TYPE_NOPE')}`,
);
model(
  'evil_reason_cr',
  `name: "evil_reason_cr"\nbackend: "identity"\n${io(`A\r${ran('reason CR')}//`, 'TYPE_NOPE')}`,
);
// A spec of a model whose input names need quoting.
model(
  'quoted_names',
  `name: "quoted_names"\nbackend: "identity"\nmax_batch_size: 0\n${io('in-put\u2029"x')}`,
);

describe('triton-node types on a hostile repository', () => {
  const out = modelTypes(repo, { importFrom: join(ROOT, 'lib/index.js') });

  it('the generated module holds the type import and interfaces only', () => {
    const source = ts.createSourceFile('models.ts', out.text, ts.ScriptTarget.ES2022, true);
    const kinds = source.statements.map((s) => ts.SyntaxKind[s.kind]);
    expect(kinds).toEqual([
      'ImportDeclaration',
      'InterfaceDeclaration', // evil_backend
      'InterfaceDeclaration', // evil_platform
      'InterfaceDeclaration', // quoted_names
      'InterfaceDeclaration', // Models
    ]);
    expect((source.statements[0] as ts.ImportDeclaration).importClause?.isTypeOnly).toBe(true);
    // The config text is still there, inert.
    expect(out.text).toContain(
      `/** Model 'evil_backend' (backend identity *\\/ ${ran('backend')} /*, max_batch_size 0). */`,
    );
    expect(out.text).toContain("//   evil_reason_newline: input 'A\\u000a(globalThis");
    expect(out.text).toContain("//   evil_reason_ls: input 'A\\u2028(globalThis");
    expect(out.text).toContain("//   evil_reason_cr: input 'A\\u000d(globalThis");
    expect(out.text).toContain('"in-put\\u2029\\"x": \'FP32\';');
  });

  it('a folder name with a newline stays in its comment', () => {
    // A folder name cannot hold '/', so the rest of its line would not be code: parsed only.
    const other = join(dir, 'other');
    mkdirSync(join(other, `evil_folder\n${ran('folder name')}`, '1'), { recursive: true });
    const text = modelTypes(other).text;
    const source = ts.createSourceFile('other.ts', text, ts.ScriptTarget.ES2022, true);
    expect(source.statements.map((s) => ts.SyntaxKind[s.kind])).toEqual([
      'ImportDeclaration',
      'InterfaceDeclaration',
    ]);
    expect(text).toContain('//   evil_folder\\u000a(globalThis');
  });

  it('compiles, and importing it runs none of the payloads', async () => {
    const js = ts.transpileModule(out.text, {
      compilerOptions: { module: ts.ModuleKind.ES2022, target: ts.ScriptTarget.ES2022 },
      reportDiagnostics: true,
    });
    expect(js.diagnostics ?? []).toEqual([]);
    const file = join(dir, 'models.mjs');
    writeFileSync(file, js.outputText);
    await import(pathToFileURL(file).href);
    expect(ranTags()).toEqual([]);
  });
});
