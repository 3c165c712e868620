/**
 * The OpenAI-compatible routes of the gateway (docs/openai.md).
 */
export type { ChatTemplate, OpenAIModelOptions, ResolvedOpenAIModel } from './options.js';
export type { EmbeddingModelOptions, OpenAIModelKind } from './embedding-options.js';
export { resolveOpenAIOptions } from './options.js';
export { OpenAIRoutes } from './routes.js';
export { OPENAI_METRICS } from './metrics.js';
