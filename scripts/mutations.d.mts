// Types of scripts/mutations.mjs for the TypeScript tests that read it.
export interface Mutation {
  /** Unique, kebab-case. */
  name: string;
  /** The promise it breaks. */
  why: string;
  /** Path from the repository root. */
  file: string;
  /** Exact text, found exactly once in `file`. */
  search: string;
  replace: string;
  /** Test files that must catch it. */
  tests: string[];
  /** Run the GPU project on the CUDA stub. */
  gpu?: boolean;
}

export declare const MUTATIONS: Mutation[];
