/**
 * Shared libraries and executables made at test time with the C compiler,
 * for the doctor's ELF reader and library resolution: each has the SONAME,
 * DT_NEEDED entries and search paths a test asks for, and no libc (built
 * with -nostdlib), so that a search limited to the test's folders finds
 * everything or reports exactly what the test removed.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

/** The C compiler, or undefined where there is none. */
export const CC = [process.env.CC, 'cc', 'gcc'].find(
  (c) => c !== undefined && c !== '' && spawnSync(c, ['--version']).status === 0,
);

/** Why ELF fixtures cannot be made here, or false. */
export const noCompiler: string | false =
  CC === undefined ? 'no C compiler (cc) to build ELF fixtures with' : false;

export interface ElfSpec {
  /** DT_SONAME (default: the file's name). */
  soname?: string;
  /** Libraries to link, by path: each adds its SONAME as a DT_NEEDED entry. */
  needs?: string[];
  /** DT_RUNPATH entries ($ORIGIN kept as written). */
  runpath?: string[];
  /** DT_RPATH entries (old-style tags). */
  rpath?: string[];
  /** An executable instead of a shared library. */
  executable?: boolean;
}

/** Builds the ELF file `path` as `spec` says; returns `path`. */
export function buildElf(path: string, spec: ElfSpec = {}): string {
  mkdirSync(dirname(path), { recursive: true });
  const source = `${path}.c`;
  const symbol = basename(path).replace(/\W/g, '_');
  writeFileSync(
    source,
    spec.executable ? 'void _start(void) { for (;;) {} }\n' : `int ${symbol}(void) { return 0; }\n`,
  );
  const args = ['-fPIC', '-nostdlib', '-o', path, source];
  if (!spec.executable) args.unshift('-shared', `-Wl,-soname,${spec.soname ?? basename(path)}`);
  if (spec.needs?.length) args.push('-Wl,--no-as-needed', ...spec.needs);
  if (spec.runpath?.length) args.push('-Wl,--enable-new-dtags', `-Wl,-rpath,${spec.runpath.join(':')}`);
  if (spec.rpath?.length) args.push('-Wl,--disable-new-dtags', `-Wl,-rpath,${spec.rpath.join(':')}`);
  const r = spawnSync(CC!, args, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${CC} ${args.join(' ')}: ${r.stderr}`);
  return path;
}

/** A search that looks only where the test says (no ld.so.conf, no system folders). */
export function onlyIn(...dirs: string[]) {
  return { ldLibraryPath: dirs.join(':'), confDirs: [], systemDirs: [] };
}

/** `join` for fixtures: a path under `root`. */
export const under =
  (root: string) =>
  (...parts: string[]) =>
    join(root, ...parts);
