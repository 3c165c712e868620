// The package's .d.ts files name Buffer, NodeJS and node:* modules, so they need
// @types/node even where a consumer's tsconfig lists no types (`"types": []`, as
// TypeScript 7's `tsc --init` writes). The entry points re-export this module so
// that the directive below reaches dist/*.d.ts: tsup's declaration bundler
// (rollup-plugin-dts 6.1) drops a `/// <reference types>` written in a .ts file,
// keeping only those of .d.ts modules, and only of modules it includes, which
// the empty `declare global` makes this one.
/// <reference types="node" />
declare global {}
export {};
