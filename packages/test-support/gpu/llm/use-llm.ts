/**
 * The shared setup of the GPU LLM's test files: why they skip, and a server
 * with the model of make_llm.py loaded (made once per file, or kept in
 * TRITON_NODE_GPU_LLM). Call it inside the file's describe().
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Server } from 'triton-node';
import { afterAll, beforeAll } from 'vitest';
import { BACKEND_DIR, LIBRARY_PATH, library, skipAllIf } from '../../helpers.js';
import { gpuSkipReason } from '../gpu-env.js';
import { torchMissing } from '../torch/models.js';
import { LLM, type LlmManifest, llmOnCpu, makeLlm, pythonBackendMissing } from './llm.js';

/** A model made for the CPU (TRITON_NODE_GPU_LLM, see llmOnCpu) runs these tests without a GPU. */
export const onCpu = llmOnCpu();

/** Why the LLM tests skip here, or false. */
export const llmSkipReason = onCpu
  ? pythonBackendMissing()
  : gpuSkipReason || pythonBackendMissing() || torchMissing();

export interface LlmUnderTest {
  readonly server: Server;
  /** The model repository (and its report file). */
  readonly dir: string;
  readonly manifest: LlmManifest;
}

/** Skips the describe() where it cannot run; else a server with the LLM loaded, stopped after it. */
export function useLlm(): LlmUnderTest {
  skipAllIf(llmSkipReason);
  let server: Server | undefined;
  let dir = '';
  let made = false;
  let manifest: LlmManifest | undefined;
  beforeAll(async () => {
    if (llmSkipReason !== false) return;
    library();
    dir = process.env.TRITON_NODE_GPU_LLM || mkdtempSync(join(tmpdir(), 'tn-gpu-llm-'));
    made = !process.env.TRITON_NODE_GPU_LLM;
    manifest = await makeLlm(dir);
    server = await Server.create({
      modelRepository: dir,
      library: LIBRARY_PATH,
      ...(BACKEND_DIR === undefined ? {} : { backendDirectory: BACKEND_DIR }),
      exitTimeoutSeconds: 30,
    });
    await server.loadModel(LLM);
  }, 900_000);
  afterAll(async () => {
    await server?.stop();
    if (made && dir !== '') rmSync(dir, { recursive: true, force: true });
  }, 120_000);
  return {
    get server() {
      return server!;
    },
    get dir() {
      return dir;
    },
    get manifest() {
      return manifest!;
    },
  };
}
