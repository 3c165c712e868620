/** The engine an example runs on (examples/engine.mjs). */
export interface ExampleEngine {
  /** libtritonserver.so: TRITON_SERVER_LIB's, else the fake engine's. */
  library: string;
  /** TRITON_BACKEND_DIR, when set. */
  backendDirectory: string | undefined;
  /** Whether it is triton-node's fake engine. */
  fake: boolean;
}

/** The library an example starts its server with, said on stderr first thing. */
export function engine(example: string): ExampleEngine;
