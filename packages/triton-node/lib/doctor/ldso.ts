/**
 * Where the dynamic loader would find each library an ELF file needs, and
 * what it needs in turn (as `ldd` prints it), worked out from the files
 * alone: nothing is loaded, so a backend whose libraries are missing is
 * described rather than crashed into. The search follows glibc's ld.so: the
 * needing object's DT_RPATH and its loaders' (when it has no DT_RUNPATH),
 * LD_LIBRARY_PATH, its DT_RUNPATH, the directories of /etc/ld.so.conf, then
 * the system directories; $ORIGIN is the needing file's folder; a library
 * already found answers to its SONAME; a candidate of another ELF class or
 * machine is passed over.
 * @internal
 * @packageDocumentation
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { type ElfDynamic, readElfDynamic } from './elf.js';

/** Where a library was found. */
export type FoundVia = 'RPATH' | 'LD_LIBRARY_PATH' | 'RUNPATH' | 'ld.so.conf' | 'system' | 'loaded' | 'path';

export interface NeededLibrary {
  /** The DT_NEEDED name ('libtorch_cuda.so'). */
  name: string;
  /** The file that needs it (the first one met, breadth first). */
  neededBy: string;
  /** Where it was found, or null when it was not. */
  path: string | null;
  via: FoundVia | null;
  /** For one not found: the directories searched, each with why ('/x/lib (RUNPATH)'). */
  searched?: string[];
}

export interface SearchOptions {
  /** LD_LIBRARY_PATH's value (default: the process's). */
  ldLibraryPath?: string;
  /** The ld.so.conf directories (default: read from /etc/ld.so.conf). */
  confDirs?: string[];
  /** The system directories (default: glibc's for this machine, those that exist). */
  systemDirs?: string[];
  /** Libraries the process already has, by name: the Triton library a backend is loaded into. */
  loaded?: Record<string, string>;
}

/** The Debian multiarch folder of this machine ('x86_64-linux-gnu'), if any. */
function multiarch(): string | undefined {
  return { x64: 'x86_64-linux-gnu', arm64: 'aarch64-linux-gnu' }[process.arch as string];
}

/** glibc's trusted directories: Debian's multiarch ones, lib64 (Fedora), lib. */
export function defaultSystemDirs(): string[] {
  const arch = multiarch();
  const dirs = [
    ...(arch === undefined ? [] : [`/lib/${arch}`, `/usr/lib/${arch}`]),
    '/lib64',
    '/usr/lib64',
    '/lib',
    '/usr/lib',
  ];
  return dirs.filter((d) => existsSync(d));
}

/** Files of `pattern` (a path whose last part may hold `*`), sorted. */
function glob(pattern: string): string[] {
  const dir = dirname(pattern);
  const base = pattern.slice(dir.length + 1);
  if (!base.includes('*')) return existsSync(pattern) ? [pattern] : [];
  const re = new RegExp(`^${base.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replaceAll('*', '.*')}$`);
  try {
    return readdirSync(dir)
      .filter((f) => re.test(f))
      .sort()
      .map((f) => join(dir, f));
  } catch {
    return [];
  }
}

/** The directories /etc/ld.so.conf lists, its `include` files followed (ldconfig's cache is made of them). */
export function ldSoConfDirs(file = '/etc/ld.so.conf', seen = new Set<string>()): string[] {
  if (seen.has(file)) return [];
  seen.add(file);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  const dirs: string[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.replace(/#.*/, '').trim();
    if (line === '' || line.startsWith('hwcap ')) continue;
    const include = /^include\s+(.+)$/.exec(line);
    if (include !== null) {
      for (const pattern of include[1]!.split(/\s+/)) {
        const full = isAbsolute(pattern) ? pattern : join(dirname(file), pattern);
        for (const f of glob(full)) dirs.push(...ldSoConfDirs(f, seen));
      }
    } else {
      dirs.push(...line.split(/[\s:,]+/).filter((d) => isAbsolute(d)));
    }
  }
  return dirs;
}

/** A DT_RPATH/DT_RUNPATH entry with $ORIGIN (or ${ORIGIN}) made the needing file's folder. */
function expand(dir: string, file: string): string {
  return dir.replace(/\$(\{ORIGIN\}|ORIGIN)/g, dirname(file));
}

interface Node {
  file: string;
  elf: ElfDynamic;
  /** The object that needed it (null: the root). */
  parent: Node | null;
}

/** The directories to search for what `node` needs, in ld.so's order, each with its source. */
function searchPath(node: Node, o: Required<SearchOptions>): Array<[string, FoundVia]> {
  const out: Array<[string, FoundVia]> = [];
  if (node.elf.runpath === null) {
    for (let n: Node | null = node; n !== null; n = n.parent) {
      // glibc drops a DT_RPATH that has a DT_RUNPATH beside it.
      if (n.elf.runpath !== null) continue;
      for (const d of n.elf.rpath ?? []) out.push([expand(d, n.file), 'RPATH']);
    }
  }
  for (const d of o.ldLibraryPath.split(/[:;]/).filter(Boolean)) out.push([d, 'LD_LIBRARY_PATH']);
  for (const d of node.elf.runpath ?? []) out.push([expand(d, node.file), 'RUNPATH']);
  for (const d of o.confDirs) out.push([d, 'ld.so.conf']);
  for (const d of o.systemDirs) out.push([d, 'system']);
  return out;
}

function withDefaults(options: SearchOptions): Required<SearchOptions> {
  return {
    ldLibraryPath: options.ldLibraryPath ?? process.env.LD_LIBRARY_PATH ?? '',
    confDirs: options.confDirs ?? ldSoConfDirs(),
    systemDirs: options.systemDirs ?? defaultSystemDirs(),
    loaded: options.loaded ?? {},
  };
}

/**
 * Every library `file` needs, directly and through the others, breadth
 * first, each once, found or not. Null when `file` is not an ELF file.
 */
export function neededLibraries(file: string, options: SearchOptions = {}): NeededLibrary[] | null {
  const root = readElfDynamic(file);
  if (root === null) return null;
  const o = withDefaults(options);
  // Libraries answer to their SONAME once found (as the loader reuses a loaded object).
  const byName = new Map<string, string>(Object.entries(o.loaded));
  const out: NeededLibrary[] = [];
  const named = new Set<string>();
  const queue: Node[] = [{ file, elf: root, parent: null }];
  const opened = new Set<string>([resolve(file)]);
  while (queue.length > 0) {
    const node = queue.shift()!;
    for (const name of node.elf.needed) {
      if (named.has(name)) continue;
      named.add(name);
      const found = find(name, node, o, byName);
      if (found === null) {
        const searched = searchPath(node, o).map(([d, via]) => `${d} (${via})`);
        out.push({ name, neededBy: node.file, path: null, via: null, searched });
        continue;
      }
      out.push({ name, neededBy: node.file, path: found.path, via: found.via });
      if (found.via === 'loaded' || opened.has(resolve(found.path))) continue;
      opened.add(resolve(found.path));
      byName.set(name, found.path);
      if (found.elf.soname !== null && !byName.has(found.elf.soname))
        byName.set(found.elf.soname, found.path);
      queue.push({ file: found.path, elf: found.elf, parent: node });
    }
  }
  return out;
}

function find(
  name: string,
  node: Node,
  o: Required<SearchOptions>,
  byName: Map<string, string>,
): { path: string; via: FoundVia; elf: ElfDynamic } | null {
  const known = byName.get(name);
  if (known !== undefined) {
    const elf = readElfDynamic(known);
    return { path: known, via: name in o.loaded ? 'loaded' : 'path', elf: elf ?? node.elf };
  }
  const fits = (elf: ElfDynamic | null): elf is ElfDynamic =>
    elf !== null && elf.bits === node.elf.bits && elf.machine === node.elf.machine;
  if (name.includes('/')) {
    const elf = readElfDynamic(name);
    return fits(elf) ? { path: name, via: 'path', elf } : null;
  }
  for (const [dir, via] of searchPath(node, o)) {
    const path = join(dir, name);
    if (!existsSync(path)) continue;
    const elf = readElfDynamic(path);
    if (fits(elf)) return { path, via, elf };
  }
  return null;
}

/**
 * Where `name` would be found if `file` opened it by that name (dlopen from
 * inside it, as libtorch opens cuDNN on first use), or null.
 */
export function locateFor(file: string, name: string, options: SearchOptions = {}): string | null {
  const elf = readElfDynamic(file);
  if (elf === null) return null;
  const o = withDefaults(options);
  return find(name, { file, elf, parent: null }, o, new Map(Object.entries(o.loaded)))?.path ?? null;
}
