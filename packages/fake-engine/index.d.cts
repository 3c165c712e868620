/** Path of the fake engine's libtritonserver.so as found when the package loaded: built from source, else prebuilt. */
export declare const libraryPath: string;
/** Looks for the library again: build/fake of a build from source, else prebuilds/<platform>-<arch>/. */
export declare function findLibrary(): string;
/** Every place the library is looked for, in order. */
export declare function candidates(): string[];
/** The version of Triton's C API the library implements. */
export declare const apiVersion: { readonly major: number; readonly minor: number };
