/**
 * The gateway as a Fastify plugin. The protocol's routes (`/v2/...` and
 * `/metrics`) are taken over in Fastify's onRequest hook, before Fastify
 * parses a body: binary request bodies then reach the gateway untouched,
 * and Fastify's own routes keep working beside them. Fastify itself is not a
 * dependency: the plugin only calls `addHook` and `hijack`.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { HttpHandler } from './server.js';

/** The parts of a Fastify instance the plugin uses. */
export interface FastifyLike {
  addHook(
    name: 'onRequest',
    hook: (
      request: { raw: IncomingMessage; url: string },
      reply: { raw: ServerResponse; hijack(): void },
      done: () => void,
    ) => void,
  ): unknown;
}

/** A Fastify plugin (`fastify.register(plugin)`). */
export type FastifyPlugin = (fastify: FastifyLike, options: unknown, done: (err?: Error) => void) => void;

/** Whether a path is one of the protocol's (or, with `openai`, of the OpenAI routes). */
function isGatewayPath(url: string, openai: boolean): boolean {
  return (
    (openai && url.startsWith('/v1/')) ||
    url === '/v2' ||
    url.startsWith('/v2/') ||
    url.startsWith('/v2?') ||
    url === '/metrics' ||
    url.startsWith('/metrics?')
  );
}

export function fastifyPlugin(handler: HttpHandler, openai = false): FastifyPlugin {
  const plugin: FastifyPlugin = (fastify, _options, done) => {
    fastify.addHook('onRequest', (request, reply, next) => {
      if (!isGatewayPath(request.url, openai)) {
        next();
        return;
      }
      reply.hijack();
      handler(request.raw, reply.raw);
    });
    done();
  };
  // Fastify's marker for a plugin that decorates the parent scope (fastify-plugin sets the same).
  (plugin as unknown as Record<symbol, boolean>)[Symbol.for('skip-override')] = true;
  return plugin;
}
