/**
 * Type-checks a consumer project of the package as its users compile it:
 * strict, `skipLibCheck: false` (so every .d.ts of ours is checked, not only
 * the parts the consumer's code touches), once with `module: nodenext` (ESM
 * .ts and CommonJS .cts files; TypeScript's defaults otherwise), once with
 * `moduleResolution: bundler`, and once listing no types (`"types": []`, as
 * TypeScript 7's `tsc --init` writes: @types/node is then loaded only by the
 * packages' own `/// <reference types="node" />`). Given the newest
 * TypeScript's tsc (the caller installs it), it also checks with the
 * tsconfig.json that its `tsc --init` writes, as it is (skipLibCheck true)
 * and with skipLibCheck false. Each file imports one entry point; the
 * gateway's files only where it is installed. Used by test/shipped.test.ts
 * (the packages built from this checkout) and test/package.test.ts (the
 * packed tarballs, installed).
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
  // Where @types/node is not loaded, Buffer and node:http's types in our
  // .d.ts files are unresolved, and with skipLibCheck (tsc --init's default)
  // silently `any`: these assignments then compile, and the expected-error
  // comment above each fails the check.
  'node-types.ts':
    "import { decodeBytes } from 'triton-node';\n" +
    '// @ts-expect-error: a Buffer is not a number\nexport const first: number = decodeBytes(new Uint8Array(0))[0]!;\n',
};

/** With @triton-node/gateway installed beside it. */
const WITH_GATEWAY: Record<string, string> = {
  'gateway.ts':
    "import { createGateway } from '@triton-node/gateway';\nexport type Made = ReturnType<typeof createGateway>;\n",
  'require-gateway.cts':
    "import gateway = require('@triton-node/gateway');\nexport type Made = typeof gateway.createGateway;\n",
  'node-types-gateway.ts':
    "import type { createGateway } from '@triton-node/gateway';\n" +
    "type Request = Parameters<ReturnType<typeof createGateway>['handler']>[0];\n" +
    '// @ts-expect-error: an IncomingMessage is not a number\nexport const request: Request = 0;\n',
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
  'no-types': { compilerOptions: { ...STRICT, module: 'nodenext', types: [] }, include: ['*.ts', '*.cts'] },
} as const;

/** The newest TypeScript (7, the Go port), for `npm install`. */
export const NEWEST_TYPESCRIPT = 'typescript@7';

export interface TypeCheck {
  status: number | null;
  output: string;
}

function tsc(compiler: string, args: string[], cwd: string): Promise<TypeCheck> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [compiler, ...args], { cwd, timeout: 240_000 });
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
 * is left as the install made it) and runs tsc once per setting; with
 * `newest` (the path of the newest TypeScript's bin/tsc), also that tsc on
 * the tsconfig.json its `tsc --init` writes there.
 */
export async function typeCheckConsumer(
  dir: string,
  { gateway, newest }: { gateway: boolean; newest?: string },
): Promise<Record<string, TypeCheck>> {
  mkdirSync(join(dir, 'node_modules', '@types'), { recursive: true });
  symlinkSync(join(ROOT, 'node_modules', '@types', 'node'), join(dir, 'node_modules', '@types', 'node'));
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ private: true, type: 'module' }));
  const sources = gateway ? { ...SOURCES, ...WITH_GATEWAY } : SOURCES;
  for (const [file, text] of Object.entries(sources)) writeFileSync(join(dir, file), text);
  const results: Record<string, TypeCheck> = {};
  for (const [name, config] of Object.entries(CONSUMER_SETTINGS)) {
    writeFileSync(join(dir, `tsconfig.${name}.json`), JSON.stringify(config));
    results[name] = await tsc(TSC, ['-p', `tsconfig.${name}.json`], dir);
  }
  if (newest !== undefined) {
    const init = await tsc(newest, ['--init'], dir);
    if (init.status !== 0) return { ...results, 'newest tsc --init': init };
    const version = (await tsc(newest, ['--version'], dir)).output.trim();
    // As written (it says skipLibCheck true), then checking our .d.ts files too.
    results[`${version}, tsc --init`] = await tsc(newest, ['-p', 'tsconfig.json', '--noEmit'], dir);
    writeFileSync(
      join(dir, 'tsconfig.libcheck.json'),
      JSON.stringify({ extends: './tsconfig.json', compilerOptions: { skipLibCheck: false } }),
    );
    results[`${version}, tsc --init, skipLibCheck false`] = await tsc(
      newest,
      ['-p', 'tsconfig.libcheck.json', '--noEmit'],
      dir,
    );
  }
  return results;
}
