/**
 * `triton-node/internal`: what triton-node's sibling packages
 * (@triton-node/gateway) use of the library beyond its public API, in one
 * place. They import the library by name, `triton-node` and this entry only,
 * so a process holds one copy of every library class whichever package made
 * it. Not part of the public API: it follows the version of the packages
 * released with it, not semver.
 * @packageDocumentation
 */
export { describe, optionError } from './base/errors.js';
export { bfloat16ToNumber, halfToNumber } from './tensor/tensor.js';
export { isTraceparent } from './request/otel.js';
