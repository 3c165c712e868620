/**
 * The doctor's ONNX Runtime line: two ONNX Runtimes that would meet in one
 * process. The Triton onnxruntime backend loads its libonnxruntime.so.1 and
 * onnxruntime-node loads its own; both have the SONAME libonnxruntime.so.1,
 * so the dynamic loader keeps whichever comes first and the other side runs
 * against a library of another version. Versions come from the library
 * files (ONNX Runtime names its ELF symbol version `VERS_<version>`) and
 * onnxruntime-node's package.json; nothing is loaded.
 * @internal
 * @packageDocumentation
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type OnnxRuntimeNode, findOnnxRuntimeNode } from '../config/onnxruntime.js';
import type { DoctorCheck, DoctorReport } from './report.js';

/** The ONNX Runtime version a libonnxruntime.so file was built as, or null when it says none. */
export function onnxRuntimeLibraryVersion(file: string): string | null {
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch {
    return null;
  }
  const found = new Set<string>();
  const marker = Buffer.from('VERS_');
  for (let at = bytes.indexOf(marker); at !== -1; at = bytes.indexOf(marker, at + 1)) {
    const m = /^VERS_(\d+\.\d+\.\d+)/.exec(bytes.subarray(at, at + 32).toString('latin1'));
    if (m !== null) found.add(m[1]!);
  }
  if (found.size === 0) return null;
  // Several nodes only in a library that kept older ones: the newest is its own.
  return [...found].sort((a, b) => a.localeCompare(b, 'en', { numeric: true })).at(-1)!;
}

/**
 * Compares the onnxruntime-node the application resolves with the Triton
 * onnxruntime backend's library in `backendDir` (null: the fake engine, whose
 * onnxruntime backend uses onnxruntime-node's library itself). `found`:
 * onnxruntime-node (null: none), by default as the application resolves it.
 */
export function checkOnnxRuntime(
  backendDir: string | null,
  found: OnnxRuntimeNode | null = findOnnxRuntimeNode() ?? null,
): { facts: DoctorReport['onnxRuntime']; checks: DoctorCheck[] } {
  const app = found ?? undefined;
  const backendLib = backendDir === null ? null : join(backendDir, 'onnxruntime', 'libonnxruntime.so.1');
  const facts: DoctorReport['onnxRuntime'] = {
    node:
      app === undefined
        ? null
        : {
            dir: app.dir,
            version: app.version ?? null,
            library: app.library ?? null,
            libraryVersion: app.library === undefined ? null : onnxRuntimeLibraryVersion(app.library),
          },
    backend:
      backendLib === null || !existsSync(backendLib)
        ? null
        : { library: backendLib, libraryVersion: onnxRuntimeLibraryVersion(backendLib) },
  };
  const node = facts.node;
  const backend = facts.backend;
  if (node === null && backend === null) return { facts, checks: [] };
  if (node === null) {
    const detail = `the onnxruntime backend's ONNX Runtime ${backend?.libraryVersion ?? '(version unknown)'}; no onnxruntime-node in the application`;
    return { facts, checks: [{ topic: 'onnx', subject: backend!.library, status: 'info', detail }] };
  }
  const nodeVersion = node.libraryVersion ?? node.version;
  if (backend === null) {
    const detail =
      backendDir === null
        ? `onnxruntime-node ${nodeVersion ?? '?'}: the fake engine's onnxruntime backend computes with its library`
        : `onnxruntime-node ${nodeVersion ?? '?'}; no onnxruntime backend in ${backendDir}`;
    return { facts, checks: [{ topic: 'onnx', subject: node.dir, status: 'info', detail }] };
  }
  const subject = `${node.dir} + ${backend.library}`;
  if (nodeVersion === null || backend.libraryVersion === null) {
    const detail = `onnxruntime-node ${nodeVersion ?? '(version unknown)'} and the onnxruntime backend's ONNX Runtime ${backend.libraryVersion ?? '(version unknown)'} share libonnxruntime.so.1 by its SONAME in one process`;
    return { facts, checks: [{ topic: 'onnx', subject, status: 'info', detail }] };
  }
  if (nodeVersion === backend.libraryVersion) {
    const detail = `onnxruntime-node and the onnxruntime backend both use ONNX Runtime ${nodeVersion}`;
    return { facts, checks: [{ topic: 'onnx', subject, status: 'ok', detail }] };
  }
  return {
    facts,
    checks: [
      {
        topic: 'onnx',
        subject,
        status: 'warn',
        detail: `two ONNX Runtime versions would meet in one process: onnxruntime-node ${nodeVersion} and the onnxruntime backend's ${backend.libraryVersion}; both are libonnxruntime.so.1, the first one loaded serves both, and the other side runs against a version it was not built for`,
        fix: `install onnxruntime-node@${backend.libraryVersion} (the backend's version), or keep onnxruntime-node out of the process that runs Triton`,
      },
    ],
  };
}
