/** Path of the fake engine's libtritonserver.so: prebuilt for this platform, or built from source. */
export declare const libraryPath: string;
/** Every place the library is looked for, in order. */
export declare function candidates(): string[];
/** The version of Triton's C API the library implements. */
export declare const apiVersion: { readonly major: number; readonly minor: number };
