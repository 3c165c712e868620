// Lint for C++: every source of the addon, the fake engine and the benchmark driver must be
// formatted as .clang-format says. Prints the files that are not.
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

const require = createRequire(import.meta.url);
const bin = join(require.resolve('clang-format/package.json'), '..', 'index.js');

function walk(dir, out) {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) walk(p, out);
    else if (/\.(cc|h)$/.test(name)) out.push(p);
  }
  return out;
}

const files = [
  'packages/triton-node/native',
  'packages/fake-engine/src',
  'packages/fake-engine/include',
  'packages/fake-engine/test/native',
  'bench/native',
].flatMap((d) => walk(d, []));
const bad = [];
for (const f of files) {
  const formatted = execFileSync('node', [bin, '--style=file', f], { encoding: 'utf8', maxBuffer: 64 << 20 });
  if (formatted !== readFileSync(f, 'utf8')) bad.push(f);
}
if (bad.length > 0) {
  console.error(
    `clang-format: ${bad.length} file(s) need formatting (run: npx clang-format -i --style=file <file>):`,
  );
  for (const f of bad) console.error(`  ${f}`);
  process.exit(1);
}
console.log(`clang-format: ${files.length} C++ files formatted`);
