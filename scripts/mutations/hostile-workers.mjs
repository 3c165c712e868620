// Mutations of one area (see scripts/mutations.mjs for the shape and the rules).
// Worker threads sharing one Triton (server.share() / Server.attach()) and
// the kept requests of plain requests: the promises an independent mutation
// audit broke without any test noticing, and the pins channel that any
// thread of the process could post on.

/** @type {import('../mutations.mjs').Mutation[]} */
export const MUTATIONS = [
  {
    name: 'kept-request-stale-epoch-kept',
    why: 'a request built before a load or unload and released after it is kept, holding the version the change may have replaced (it must be deleted at its release)',
    file: 'packages/triton-node/native/request/kept_requests.cc',
    search:
      '  if (closed_ || g_model_changes.load(std::memory_order_acquire) != 0 ||\n' +
      '      record->epoch != ModelEpoch()) {\n',
    replace: '  if (closed_ || g_model_changes.load(std::memory_order_acquire) != 0) {\n',
    tests: ['packages/triton-node/test/request/kept-requests.test.ts'],
  },
  {
    name: 'kept-request-kept-during-change',
    why: 'a request released while a load or unload runs is kept (the purge at the change has passed, so it outlives the change)',
    file: 'packages/triton-node/native/request/kept_requests.cc',
    search:
      '  if (closed_ || g_model_changes.load(std::memory_order_acquire) != 0 ||\n' +
      '      record->epoch != ModelEpoch()) {\n',
    replace: '  if (closed_ || record->epoch != ModelEpoch()) {\n',
    tests: ['packages/triton-node/test/request/kept-requests.test.ts'],
  },
  {
    name: 'kept-request-epoch-still-at-change-end',
    why: 'the model epoch does not move when a change ends: a request built during a load and released after it is kept',
    file: 'packages/triton-node/native/request/kept_requests.cc',
    search: '  BumpModelEpoch();  // first: a request made during the change is stale\n',
    replace: '',
    tests: ['packages/triton-node/test/request/kept-requests.test.ts'],
  },
  {
    name: 'kept-request-timeout-dropped',
    why: 'a request with timeoutMicroseconds counts as plain: it goes on a kept request without its timeout, so Triton never times it out',
    file: 'packages/triton-node/native/request/builder.cc',
    search: '         nums.At(kSlotTimeout) == -1 && nums.At(kSlotFlags) == -1 &&\n',
    replace: '         nums.At(kSlotFlags) == -1 &&\n',
    tests: ['packages/triton-node/test/request/kept-requests.test.ts'],
  },
  {
    name: 'pins-never-published',
    why: "the owner's pin changes never reach attached servers: workers keep routing unversioned requests to the pin they attached with",
    file: 'packages/triton-node/lib/deploy/shared-pins.ts',
    search: '    this.#channel.postMessage(hint);\n',
    replace: '',
    tests: [
      'packages/triton-node/test/lifecycle/shared-server.test.ts',
      'packages/triton-node/test/hostile/shared-pins.test.ts',
    ],
  },
  {
    name: 'pins-ignored-at-attach',
    why: "a worker attaching after a pin starts without it: its unversioned requests go to Triton's highest version until the owner pins again",
    file: 'packages/triton-node/lib/deploy/shared-pins.ts',
    search:
      "    this.#channel.onmessageerror = () => this.#ignore('a message that could not be deserialized');\n" +
      '    this.refresh();\n',
    replace:
      "    this.#channel.onmessageerror = () => this.#ignore('a message that could not be deserialized');\n",
    tests: [
      'packages/triton-node/test/lifecycle/shared-server.test.ts',
      'packages/triton-node/test/hostile/shared-pins.test.ts',
    ],
  },
  {
    name: 'pins-forged-generation-read',
    why: "a hint with a generation the owner never published is taken as the owner's (not counted as a message another thread posted)",
    file: 'packages/triton-node/lib/deploy/shared-pins.ts',
    search: '      if (data.generation > this.#read()[0]) {\n',
    replace: '      if (false) {\n',
    tests: ['packages/triton-node/test/hostile/shared-pins.test.ts'],
  },
  {
    name: 'pins-written-by-attached',
    why: "an attached core may write the owner's pins (setPins): any thread that knows the share id could redirect every worker",
    file: 'packages/triton-node/native/server/share.cc',
    search: '  if (owner_) {\n    ThrowTypeError(env,\n',
    replace: '  if (false) {\n    ThrowTypeError(env,\n',
    tests: ['packages/triton-node/test/hostile/shared-pins.test.ts'],
  },
  {
    name: 'rollback-in-worker',
    why: 'rollback() is let through on an attached server (deploy and rollback stay with the owner, which keeps the history and the canaries)',
    file: 'packages/triton-node/lib/api/server.ts',
    search: "      this.#ownerOnly('rollback', name);\n",
    replace: '',
    tests: ['packages/triton-node/test/lifecycle/shared-server.test.ts'],
  },
  {
    name: 'attach-foreign-library',
    why: 'a share() value made over another Triton library is attached (it must be refused, naming both libraries)',
    file: 'packages/triton-node/lib/api/server.ts',
    search: '    if (library.path !== value.library) {\n',
    replace: '    if (library.path !== value.library && value.library === library.path) {\n',
    tests: ['packages/triton-node/test/lifecycle/shared-server.test.ts'],
  },
  {
    name: 'attach-while-owner-stopping',
    why: 'an attach is let in while the owner stops (after its stop listed the attachments): the attached core would submit to a server being deleted',
    file: 'packages/triton-node/native/server/share.cc',
    search: '    running = owner->phase_ == Phase::kRunning;\n',
    replace: '    running = !StoppedForJs(owner->phase_);\n',
    tests: ['packages/triton-node/test/lifecycle/shared-server.test.ts'],
  },
  {
    name: 'worker-kept-outlive-owner-stop',
    why: "the owner's stop closes only its own pool: a worker's kept requests outlive Triton's server (deleted after it, when the worker goes)",
    file: 'packages/triton-node/native/server/share.cc',
    search: '  for (auto& a : LiveAttachments()) a->kept_requests_.Close();\n',
    replace: '',
    tests: ['packages/triton-node/test/lifecycle/shared-server.test.ts'],
  },
  {
    name: 'owner-stop-ignores-attached-requests',
    why: "an attached worker's requests in flight do not count for the owner's stop: at its exit timeout it cancels only its own, and the worker's run the queue out after stop() returned",
    file: 'packages/triton-node/native/server/stop.cc',
    search: '    deferred = ledger_.Inflight() > 0 || AttachmentsInflight();\n',
    replace: '    deferred = ledger_.Inflight() > 0;\n',
    tests: ['packages/triton-node/test/lifecycle/shared-server.test.ts'],
  },
  {
    name: 'owner-stop-leaves-attached-running',
    why: "the owner's stop that times out cancels its own requests but not an attached worker's",
    file: 'packages/triton-node/native/server/stop.cc',
    search: '      CancelAttachments();\n',
    replace: '',
    tests: ['packages/triton-node/test/lifecycle/shared-server.test.ts'],
  },
];
