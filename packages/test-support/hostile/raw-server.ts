import { fakeEngine } from 'triton-node/testing';
/**
 * A server made through the addon itself, without lib/'s checks: what the
 * engine does with a file the library would have refused (a race can put
 * one there after the check). The events of its requests are dropped; tests
 * use it for model control only.
 */
import type { NativeServer } from '../../triton-node/lib/abi/binding.js';
import { addon, loadLibrary } from '../../triton-node/lib/addon/load.js';
import { findOnnxRuntimeNode } from '../../triton-node/lib/config/onnxruntime.js';

/** A server on `repo` (explicit model control) of the library under test (TRITON_SERVER_LIB, else the fake engine). */
export async function rawServer(repo: string, exitTimeoutSeconds = 5): Promise<NativeServer> {
  const info = loadLibrary(process.env.TRITON_SERVER_LIB || fakeEngine.libraryPath);
  const ort = findOnnxRuntimeNode()?.library;
  return addon().createServer(
    {
      modelRepositories: [repo],
      modelControlMode: 2, // explicit
      startupModels: [],
      strictModelConfig: true,
      exitTimeoutSeconds,
      modelLoadRetryCount: 0,
      exitOnError: true,
      strictReadiness: true,
      backendDirectory: info.isFake ? '' : process.env.TRITON_BACKEND_DIR || '',
      backendConfig:
        info.isFake && ort !== undefined ? [['onnxruntime', 'fake-onnxruntime-library', ort]] : [],
      log: { verbose: 0, info: false, warn: false, error: false },
      metrics: false,
    },
    () => {},
  );
}
