/**
 * Type-checks a consumer project of the package as its users compile it:
 * strict, `skipLibCheck: false` (so every .d.ts of ours is checked, not only
 * the parts the consumer's code touches), once with `module: nodenext` (ESM
 * .ts and CommonJS .cts files; TypeScript's defaults otherwise) and once with
 * `moduleResolution: bundler`. Each file imports one entry point. Used by
 * packages/triton-node/test/package/shipped.test.ts (the package built from this
 * checkout) and test/package.test.ts (the packed tarballs, installed).
 */
import { spawn } from 'node:child_process';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const TSC = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');

/** One file per entry point: what a user writes first. */
const SOURCES: Record<string, string> = {
  'index.ts': "import { Server } from 'triton-node';\nexport type Created = Server;\n",
  'testing.ts':
    "import { fakeEngine } from 'triton-node/testing';\nexport const path: string = fakeEngine.libraryPath;\n",
  'require.cts':
    "import triton = require('triton-node');\nimport testing = require('triton-node/testing');\n" +
    'export type All = [triton.Server, typeof testing.fakeEngine];\n',
};

/** With @triton-node/gateway installed beside it. */
const WITH_GATEWAY: Record<string, string> = {
  'gateway.ts':
    "import { createGateway } from '@triton-node/gateway';\nexport type Made = ReturnType<typeof createGateway>;\n",
  'require-gateway.cts':
    "import gateway = require('@triton-node/gateway');\nexport type Made = typeof gateway.createGateway;\n",
};

const STRICT = { strict: true, skipLibCheck: false, noEmit: true };

/** The compiler settings checked, by name. */
export const CONSUMER_SETTINGS = {
  nodenext: { compilerOptions: { ...STRICT, module: 'nodenext' }, include: ['*.ts', '*.cts'] },
  // TypeScript's default target (ES5) cannot read a class's #private in a
  // .d.ts; a bundler project sets a modern one.
  bundler: {
    compilerOptions: { ...STRICT, module: 'esnext', moduleResolution: 'bundler', target: 'es2022' },
    include: ['*.ts'],
  },
} as const;

export interface TypeCheck {
  status: number | null;
  output: string;
}

function tsc(project: string, cwd: string): Promise<TypeCheck> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [TSC, '-p', project], { cwd, timeout: 240_000 });
    let output = '';
    child.stdout.on('data', (d: Buffer) => {
      output += String(d);
    });
    child.stderr.on('data', (d: Buffer) => {
      output += String(d);
    });
    child.on('error', (err) => resolve({ status: null, output: `${output}\n${err.message}` }));
    child.on('close', (status) => resolve({ status, output }));
  });
}

/**
 * Writes the consumer project into `dir` (a folder below the project that
 * has triton-node in its node_modules; @types/node comes from this
 * repository, next to the sources only, so the consumer's own node_modules
 * is left as the install made it) and runs tsc once per setting.
 */
export async function typeCheckConsumer(
  dir: string,
  { gateway }: { gateway: boolean },
): Promise<Record<keyof typeof CONSUMER_SETTINGS, TypeCheck>> {
  mkdirSync(join(dir, 'node_modules', '@types'), { recursive: true });
  symlinkSync(join(ROOT, 'node_modules', '@types', 'node'), join(dir, 'node_modules', '@types', 'node'));
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ private: true, type: 'module' }));
  const sources = gateway ? { ...SOURCES, ...WITH_GATEWAY } : SOURCES;
  for (const [file, text] of Object.entries(sources)) writeFileSync(join(dir, file), text);
  const results: Partial<Record<keyof typeof CONSUMER_SETTINGS, TypeCheck>> = {};
  for (const [name, config] of Object.entries(CONSUMER_SETTINGS)) {
    writeFileSync(join(dir, `tsconfig.${name}.json`), JSON.stringify(config));
    results[name as keyof typeof CONSUMER_SETTINGS] = await tsc(`tsconfig.${name}.json`, dir);
  }
  return results as Record<keyof typeof CONSUMER_SETTINGS, TypeCheck>;
}
