/**
 * The gateway's commands, as `triton-node serve` and `triton-node revoke`
 * run them: triton-node's CLI imports this module by name when the gateway
 * is installed.
 * @packageDocumentation
 */
export { serveCommand } from './serve.js';
export { revokeCommand } from './revoke.js';
