// The numbers and names lib/abi/binding.ts and the addon share (submit()'s
// layout, memory, parameter and datatype codes, the event encoding's flags,
// the fake engine's live-object kinds) are defined on both sides; the addon exports its own, and they must
// match exactly. lib/abi/binding.ts builds its codes from one `as const` list per
// set, so the lists' order is checked here too.
import { describe, expect, it } from 'vitest';
import {
  DATATYPE_NAMES,
  ERROR_CODES,
  EVENT_FLAGS,
  EVENT_PARAMETER_TYPES,
  FAKE_LIVE_OBJECT_KINDS,
  MEMORY_TYPES,
  NATIVE_DATATYPE_CODES,
  NATIVE_MEMORY_CODES,
  NATIVE_PARAMETER_CODES,
  PARAMETER_TYPES,
  SUBMIT_SLOTS,
  TRITON_API,
} from '../../lib/abi/binding.js';
import { addon, loadLibrary } from '../../lib/addon/load.js';
import { fakeEngine } from '../../lib/testing.js';

describe('the TypeScript and C++ sides of the binding agree', () => {
  const native = addon().constants;

  it('on the layout of submit()', () => {
    expect(native.submitSlots).toEqual(SUBMIT_SLOTS);
  });

  it('on the Triton C API the loader accepts', () => {
    expect(native.tritonApi).toEqual(TRITON_API);
  });

  it('on memory, parameter and datatype codes', () => {
    expect(native.memoryCodes).toEqual(NATIVE_MEMORY_CODES);
    expect(native.parameterCodes).toEqual(NATIVE_PARAMETER_CODES);
    expect(native.datatypeCodes).toEqual(NATIVE_DATATYPE_CODES);
  });

  it('on the names behind the codes, in code order', () => {
    const byCode = (codes: Record<string, number>) =>
      Object.entries(codes)
        .sort((a, b) => a[1] - b[1])
        .map(([name]) => name);
    expect(byCode(native.memoryCodes)).toEqual([...MEMORY_TYPES]);
    expect(byCode(native.parameterCodes)).toEqual([...PARAMETER_TYPES]);
    expect(byCode(native.datatypeCodes)).toEqual([...DATATYPE_NAMES]);
  });

  it("on the event encoding's flags and parameter types", () => {
    expect(native.eventEncoding.flags).toEqual(EVENT_FLAGS);
    expect(native.eventEncoding.parameterTypes).toEqual(EVENT_PARAMETER_TYPES);
  });

  it("on error codes and the fake engine's live-object kinds, in order", () => {
    expect(
      Object.entries(native.errorCodes)
        .sort((a, b) => a[1] - b[1])
        .map(([name]) => name),
    ).toEqual([...ERROR_CODES]);
    expect(Object.values(native.errorCodes).sort((a, b) => a - b)).toEqual(ERROR_CODES.map((_, i) => i));
    expect(native.liveObjectKinds).toEqual([...FAKE_LIVE_OBJECT_KINDS]);
  });

  it.skipIf(!fakeEngine.available())("on the fake engine's live-object kinds, in order", () => {
    // Its own process: loading the fake engine here touches no other test file.
    expect(loadLibrary(fakeEngine.libraryPath).isFake).toBe(true);
    expect(Object.keys(addon().fakeLiveObjects()!)).toEqual([...FAKE_LIVE_OBJECT_KINDS]);
  });
});
