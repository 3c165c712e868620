// Mutations of one area (see scripts/mutations.mjs for the shape and the rules).

/** @type {import('../mutations.mjs').Mutation[]} */
export const MUTATIONS = [];
