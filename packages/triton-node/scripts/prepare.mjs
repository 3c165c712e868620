// triton-node's prepare step (package.json "prepare"), for an install from git
// (`npm install github:triton-node/triton-node#v0.1.0`): npm installs the clone
// with its dev dependencies, runs only `prepare`, then packs it; dist/ is not
// committed, so it is built here when it is missing. Everywhere else it has
// nothing to do: `npm pack` and `npm publish` build dist/ in prepack (which
// runs before this), `npm test` builds it too, and a clone that has dist/
// keeps it.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
if (!existsSync(join(root, 'dist', 'index.js'))) {
  process.stderr.write('triton-node: building dist/ (TypeScript, for an install from git)\n');
  const npm = process.env.npm_execpath;
  const child = npm
    ? spawnSync(process.execPath, [npm, 'run', 'build:ts'], { cwd: root, stdio: 'inherit' })
    : spawnSync('npm', ['run', 'build:ts'], { cwd: root, stdio: 'inherit' });
  process.exitCode = child.status ?? 1;
}
