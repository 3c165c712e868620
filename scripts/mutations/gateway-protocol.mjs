// Mutations of one area (see scripts/mutations.mjs for the shape and the rules).
// The gateway's protocols (issue 27): audit lines, request ids, authentication
// before a body, what the codecs pass through, and the fake's queue limit.

const HOSTILE = 'packages/gateway/test/hostile-protocol.test.ts';

/** @type {import('../mutations.mjs').Mutation[]} */
export const MUTATIONS = [
  {
    name: 'openai-generate-not-admitted-before-body',
    why: 'authentication first: the OpenAI completion routes read and parse the body before the guard admits them (an anonymous caller gets 400 for bad JSON, and no audit line)',
    file: 'packages/gateway/lib/openai/routes.ts',
    search: '    await this.#admit(call);\n',
    replace: '    if (kind === undefined) await this.#admit(call);\n',
    tests: [HOSTILE],
  },
  {
    name: 'openai-audit-of-failures-dropped',
    why: 'one audit line per request: an OpenAI request that fails after admission (bad JSON, no model, 405, 413, a client leaving mid-body) ends without its audit line',
    file: 'packages/gateway/lib/openai/routes.ts',
    search: '      ex.end({\n        status: res.headersSent ? res.statusCode : 499,\n',
    replace:
      '      if (ex.error === undefined && res.statusCode < 400)\n        ex.end({\n        status: res.headersSent ? res.statusCode : 499,\n',
    tests: [HOSTILE],
  },
  {
    name: 'openai-request-id-ignored',
    why: "request ids: the OpenAI routes ignore the client's X-Request-Id (a new id in the header and the audit line)",
    file: 'packages/gateway/lib/http/server.ts',
    search: "requestIdOf(req.headers['x-request-id'])",
    replace: 'requestIdOf(undefined)',
    tests: [HOSTILE],
  },
  {
    name: 'grpc-request-id-metadata-second',
    why: "request ids: a gRPC call's x-request-id metadata loses to the message's id",
    file: 'packages/gateway/lib/grpc/call.ts',
    search:
      "    rpc === 'ModelStreamInfer' ? msg.id || headers['x-request-id'] : headers['x-request-id'] || msg.id,\n",
    replace: "    msg.id || headers['x-request-id'],\n",
    tests: [HOSTILE],
  },
  {
    name: 'client-error-audits-served-request',
    why: "one audit line per request: a body cut short by the client also gets the clientError listener's line",
    file: 'packages/gateway/lib/guard/guard.ts',
    search:
      "    if (err.code === 'ECONNRESET' || !socket.writable || this.#hooks.isServing?.(socket) === true) {\n",
    replace: "    if (err.code === 'ECONNRESET' || !socket.writable) {\n",
    tests: [HOSTILE],
  },
  {
    name: 'read-body-of-closed-request-waits',
    why: 'no hung request: the body of a request whose client left while it was admitted is waited for forever (its audit line and slot never come)',
    file: 'packages/gateway/lib/http/body.ts',
    search: '  if (req.destroyed && !req.readableEnded)\n',
    replace: '  if (req.destroyed && !req.readableEnded && length === -1)\n',
    tests: [HOSTILE],
  },
  {
    name: 'grpc-raw-and-typed-accepted',
    why: 'as Triton: a gRPC input with typed contents beside raw_input_contents is taken (the raw bytes win silently)',
    file: 'packages/gateway/lib/grpc/codec.ts',
    search: '    if (typed && raw.length > 0)\n',
    replace: '    if (typed && raw.length < 0)\n',
    tests: [HOSTILE],
  },
  {
    name: 'request-parameters-unlimited',
    why: 'no stack overflow: 200,000 request parameters reach the addon call as arguments (400 "Maximum call stack size exceeded")',
    file: 'packages/triton-node/lib/request/validate.ts',
    search: '  if (entries.length > MAX_REQUEST_PARAMETERS) {\n',
    replace: '  if (entries.length > Number.POSITIVE_INFINITY) {\n',
    tests: [HOSTILE],
  },
  {
    name: 'generate-flattens-recursively',
    why: 'no stack overflow: the generate form flattens nested arrays with flat(Infinity), which overflows on deep nesting',
    file: 'packages/gateway/lib/http/generate.ts',
    search: '    const data = Array.isArray(value) ? flatten(value) : [value];\n',
    replace: '    const data = Array.isArray(value) ? value.flat(Number.POSITIVE_INFINITY) : [value];\n',
    tests: [HOSTILE],
  },
  {
    name: 'codec-request-parameters-dropped',
    why: "the KServe codec (HTTP JSON, HTTP binary, gRPC) drops a request's custom parameters",
    file: 'packages/gateway/lib/kserve/codec.ts',
    search: '  if (Object.keys(rest).length > 0) request.parameters = rest;\n',
    replace: '',
    tests: [HOSTILE],
  },
  {
    name: 'grpc-request-parameters-dropped',
    why: "the gRPC codec drops a ModelInferRequest's parameters (custom ones, timeout, priority, sequence)",
    file: 'packages/gateway/lib/grpc/codec.ts',
    search: '  requestParameters(plainParameters(msg.parameters), request);\n',
    replace: '  requestParameters({}, request);\n',
    tests: [HOSTILE],
  },
  {
    name: 'codec-timeout-dropped',
    why: "the KServe codec drops the request's timeout parameter (a request waiting past it in the queue still runs)",
    file: 'packages/gateway/lib/kserve/codec.ts',
    search: '        request.timeoutMicroseconds = nonNegativeInteger(v, what);\n',
    replace: '        nonNegativeInteger(v, what);\n',
    tests: [HOSTILE],
  },
  {
    name: 'generate-stream-disconnect-ignored',
    why: 'a generate_stream client that disconnects is cancelled only when the next response comes to be written',
    file: 'packages/gateway/lib/http/generate.ts',
    search:
      "  res.once('close', gone);\n  // The client may have left while the body was read and the request built.\n  if (res.destroyed) gone();\n",
    replace: '',
    tests: [HOSTILE],
  },
  {
    name: 'bytes-copy-path-byte-order',
    why: "BYTES output elements that are not back to back get their length prefixes in big-endian order (the codec's copy path)",
    file: 'packages/gateway/lib/kserve/codec.ts',
    search: '    out.writeUInt32LE(e.byteLength, at);\n',
    replace: '    out.writeUInt32BE(e.byteLength, at);\n',
    tests: [HOSTILE],
  },
  {
    name: 'bytes-encode-low-byte-only',
    why: 'BYTES inputs given as elements (HTTP JSON, gRPC bytes_contents) get only the low byte of each length prefix',
    file: 'packages/triton-node/lib/config/datatypes.ts',
    search: '    out.writeUInt32LE(bytes.byteLength, pos);\n',
    replace: '    out.writeUInt32LE(bytes.byteLength & 0xff, pos);\n',
    tests: [HOSTILE],
  },
  {
    name: 'fake-queue-admits-one-more',
    why: 'the fake at least as strict as Triton: a dynamic batcher with max_queue_size N queues an (N+1)-th request',
    file: 'packages/fake-engine/src/scheduling/scheduler.cc',
    search: '        m->queue.size() + m->forming >= qp.max_queue_size) {\n',
    replace: '        m->queue.size() + m->forming > qp.max_queue_size) {\n',
    tests: [HOSTILE],
  },
];
