// Which engine an example runs on, said the same way by every example: the
// fake engine by default (triton-node's own libtritonserver.so, with the
// identity, repeat and square test backends: no Triton, no GPU), real Triton
// when TRITON_SERVER_LIB names its libtritonserver.so (TRITON_BACKEND_DIR its
// backends). Plain JavaScript, so that the .mjs examples can use it as they are
// (engine.d.mts types it for the .ts ones).
import { fakeEngine } from 'triton-node/testing';

/**
 * The library an example starts its server with, said on stderr first thing
 * (stdout stays the example's own output), as `[example] engine: ...`.
 * Exits with 1 when TRITON_SERVER_LIB is not set and the fake engine is not
 * installed either.
 * @param {string} example the example's name, which starts its lines
 * @returns {{ library: string, backendDirectory: string | undefined, fake: boolean }}
 */
export function engine(example) {
  const library = process.env.TRITON_SERVER_LIB;
  const backendDirectory = process.env.TRITON_BACKEND_DIR || undefined;
  if (library) {
    console.error(`[${example}] engine: Triton, ${library} (TRITON_SERVER_LIB)`);
    return { library, backendDirectory, fake: false };
  }
  if (!fakeEngine.available()) {
    console.error(
      `[${example}] engine: none: TRITON_SERVER_LIB is not set and the fake engine is not installed ` +
        '(npm install @triton-node/fake-engine): run `npx triton-node doctor`',
    );
    process.exit(1);
  }
  console.error(
    `[${example}] engine: the fake engine, triton-node's own libtritonserver.so (not Triton); ` +
      'set TRITON_SERVER_LIB=/path/to/libtritonserver.so to run on Triton',
  );
  return { library: fakeEngine.libraryPath, backendDirectory, fake: true };
}
