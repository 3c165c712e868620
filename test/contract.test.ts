// The numbers lib/binding.ts and the addon share (submit()'s layout, memory,
// parameter and datatype codes) are defined on both sides; the addon exports
// its own, and they must match exactly.
import { describe, expect, it } from 'vitest';
import {
  NATIVE_DATATYPE_CODES,
  NATIVE_MEMORY_CODES,
  NATIVE_PARAMETER_CODES,
  SUBMIT_SLOTS,
} from '../lib/binding.js';
import { addon } from '../lib/native.js';

describe('the TypeScript and C++ sides of the binding agree', () => {
  const native = addon().constants;

  it('on the layout of submit()', () => {
    expect(native.submitSlots).toEqual(SUBMIT_SLOTS);
  });

  it('on memory, parameter and datatype codes', () => {
    expect(native.memoryCodes).toEqual(NATIVE_MEMORY_CODES);
    expect(native.parameterCodes).toEqual(NATIVE_PARAMETER_CODES);
    expect(native.datatypeCodes).toEqual(NATIVE_DATATYPE_CODES);
  });
});
