// An OpenTelemetry SDK for tests: spans kept in memory (the SDK's own
// InMemorySpanExporter), and a context manager on AsyncLocalStorage so that
// `context.with()` makes a span the active one across awaits.
import { AsyncLocalStorage } from 'node:async_hooks';
import { type Context, type ContextManager, ROOT_CONTEXT, context, trace } from '@opentelemetry/api';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';

class StorageContextManager implements ContextManager {
  readonly #storage = new AsyncLocalStorage<Context>();
  active(): Context {
    return this.#storage.getStore() ?? ROOT_CONTEXT;
  }
  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(
    ctx: Context,
    fn: F,
    thisArg?: ThisParameterType<F>,
    ...args: A
  ): ReturnType<F> {
    return this.#storage.run(ctx, () => fn.apply(thisArg, args));
  }
  bind<T>(_ctx: Context, target: T): T {
    return target;
  }
  enable(): this {
    return this;
  }
  disable(): this {
    this.#storage.disable();
    return this;
  }
}

/** Registers a global tracer provider exporting to memory; returns the exporter. */
export function inMemoryTracing(): InMemorySpanExporter {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  trace.disable();
  context.disable();
  context.setGlobalContextManager(new StorageContextManager());
  trace.setGlobalTracerProvider(provider);
  return exporter;
}

/** A span's [seconds, nanoseconds] time as nanoseconds. */
export function ns(t: [number, number]): bigint {
  return BigInt(t[0]) * 1_000_000_000n + BigInt(t[1]);
}

/** The spans of trace `traceId` by name (each name once). */
export function byName(spans: ReadableSpan[], traceId: string): Map<string, ReadableSpan[]> {
  const out = new Map<string, ReadableSpan[]>();
  for (const s of spans) {
    if (s.spanContext().traceId !== traceId) continue;
    const list = out.get(s.name) ?? [];
    list.push(s);
    out.set(s.name, list);
  }
  return out;
}

/** The parent span id of `s` (SDK 2: parentSpanContext). */
export function parentOf(s: ReadableSpan): string | undefined {
  return s.parentSpanContext?.spanId;
}
