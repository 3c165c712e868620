// Builds the stand-in libcudart (stub-cudart.c) for the 'gpu-stub' test
// project. Its soname is libcudart.so, so the fake engine's own
// dlopen("libcudart.so") finds the copy the addon already loaded.
import { execFileSync } from 'node:child_process';
import { mkdirSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export default function setup(): void {
  const source = fileURLToPath(new URL('./stub-cudart.c', import.meta.url));
  const out = fileURLToPath(new URL('../../build/stub-cudart/libcudart.so', import.meta.url));
  try {
    if (statSync(out).mtimeMs >= statSync(source).mtimeMs) return;
  } catch {
    // not built yet
  }
  mkdirSync(fileURLToPath(new URL('../../build/stub-cudart/', import.meta.url)), { recursive: true });
  execFileSync(
    process.env.CC || 'cc',
    ['-shared', '-fPIC', '-O1', '-Wl,-soname,libcudart.so', '-o', out, source, '-lpthread', '-lrt'],
    { stdio: 'inherit' },
  );
}
