/**
 * The library as one module, for the build: tsup bundles it alone into
 * dist/core.js (and core.cjs), and every entry point of the package (index,
 * testing, gateway, the gateway's worker, the CLI) imports the library's
 * modules from there instead of carrying a copy of them. So there is one
 * TritonError, one Server, one CudaBuffer in a process whichever entry
 * point made them, and `instanceof` holds across entry points.
 *
 * Besides the public API, it exports the modules that the other entry
 * points import by path (their internals included); tsup.config.ts fails the
 * build when an entry point imports a library module not listed here.
 * @packageDocumentation
 */
export * from './index.js';
export * from './codegen/codegen.js';
export * from './config/datatypes.js';
export * from './doctor/report.js';
export * from './base/errors.js';
export * from './lint/index.js';
export * from './addon/load.js';
export * from './tensor/tensor.js';
export * from './tune/report.js';
export * from './internal.js';
