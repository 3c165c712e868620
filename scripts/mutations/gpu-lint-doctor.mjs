// Mutations of one area (see scripts/mutations.mjs for the shape and the rules).
// GPU memory in lint and doctor (issue 41, item 5): lint's gpu-memory-budget
// sums every model's weights × instances per GPU, with the runtime estimate,
// against the GPU's memory and the guidance's headroom; doctor resolves each
// backend's libraries as the dynamic loader would, and reads each GPU's free
// memory without keeping a CUDA context.

/** @type {import('../mutations.mjs').Mutation[]} */
export const MUTATIONS = [
  {
    name: 'gpu-budget-no-headroom',
    why: 'a GPU over 90% of its memory is a finding (the guidance keeps 10-20% free): only one over 100% would be',
    file: 'packages/triton-node/lib/lint/gpu-budget.ts',
    search: '  const over = totals.map((_, g) => g).filter((g) => ratio(g) > WARN_SHARE);\n',
    replace: '  const over = totals.map((_, g) => g).filter((g) => ratio(g) > 1);\n',
    tests: ['packages/triton-node/test/lint/gpu-memory-budget.test.ts'],
  },
  {
    name: 'gpu-budget-one-model',
    why: 'every model of every repository on a GPU counts: only the last one read would',
    file: 'packages/triton-node/lib/lint/gpu-budget.ts',
    search:
      '    for (const [g, shares] of modelShares(m, totals)) perGpu.set(g, [...(perGpu.get(g) ?? []), ...shares]);\n',
    replace: '    for (const [g, shares] of modelShares(m, totals)) perGpu.set(g, shares);\n',
    tests: ['packages/triton-node/test/lint/gpu-memory-budget.test.ts'],
  },
  {
    name: 'gpu-budget-ignores-gpus-list',
    why: "a group's gpus: [..] puts its instances on those GPUs only: they would land on every GPU",
    file: 'packages/triton-node/lib/lint/gpu-budget.ts',
    search: '    for (const g of group.gpus === undefined ? all : listed) {\n',
    replace: '    for (const g of all) {\n',
    tests: ['packages/triton-node/test/lint/gpu-memory-budget.test.ts'],
  },
  {
    name: 'gpu-budget-no-python-stub',
    why: "a Python instance costs its stub's CUDA context (~500 MiB) on top of its weights: it would count as weights + 20%",
    file: 'packages/triton-node/lib/lint/gpu-budget.ts',
    search:
      '    const each = python ? weights + versions.length * PYTHON_STUB_BYTES : weights * (1 + RUNTIME_SHARE);\n',
    replace: '    const each = weights * (1 + RUNTIME_SHARE);\n',
    tests: [
      'packages/triton-node/test/lint/gpu-memory-budget.test.ts',
      'packages/triton-node/test/lint/lint.test.ts',
    ],
  },
  {
    name: 'weights-no-external-data',
    why: "an ONNX model's external data files are its weights: only model.onnx's own bytes would count",
    file: 'packages/triton-node/lib/lint/weights.ts',
    search:
      '      for (const location of onnxExternalDataFiles(path) ?? []) tally.add(join(versionDir, location));\n',
    replace: '',
    tests: ['packages/triton-node/test/lint/gpu-memory-budget.test.ts'],
  },
  {
    name: 'weights-whole-folder',
    why: 'only the files a backend loads are weights: READMEs and tokenizers in the version folder would count',
    file: 'packages/triton-node/lib/lint/weights.ts',
    search: '  tally.add(versionDir, (name) => WEIGHT_FILE.test(name));\n',
    replace: '  tally.add(versionDir);\n',
    tests: ['packages/triton-node/test/lint/gpu-memory-budget.test.ts'],
  },
  {
    name: 'lint-ignores-machine-gpus',
    why: "without gpuMemoryBytes lint measures against this machine's GPUs: it would skip the rule where CUDA sees GPUs",
    file: 'packages/triton-node/lib/lint/gpu-budget.ts',
    search: '  if (!described.available || devices.length === 0) {\n',
    replace: '  if (true) {\n',
    tests: ['packages/triton-node/test/gpu/lint-memory.test.ts'],
    gpu: true,
  },
  {
    name: 'ldso-no-origin',
    why: "$ORIGIN in a RUNPATH is the needing library's folder: the backend's own libtorch beside it would not be found",
    file: 'packages/triton-node/lib/doctor/ldso.ts',
    search: '  return dir.replace(/\\$(\\{ORIGIN\\}|ORIGIN)/g, dirname(file));\n',
    replace: '  return dir;\n',
    tests: ['packages/triton-node/test/cli/doctor-libraries.test.ts'],
  },
  {
    name: 'ldso-runpath-keeps-rpath',
    why: "a library with a RUNPATH of its own is searched without its loaders' RPATHs (ld.so's rule): a library the loader misses would be reported found",
    file: 'packages/triton-node/lib/doctor/ldso.ts',
    search: '  if (node.elf.runpath === null) {\n',
    replace: '  if (true) {\n',
    tests: ['packages/triton-node/test/cli/doctor-libraries.test.ts'],
  },
  {
    name: 'doctor-missing-library-silent',
    why: 'a backend whose library the loader does not find has a FAIL line naming it: it would pass unnoticed',
    file: 'packages/triton-node/lib/doctor/needs.ts',
    search: '    if (missing.length === 0 || OWN_LINES.has(backend)) continue;\n',
    replace: '    continue;\n',
    tests: ['packages/triton-node/test/cli/doctor-libraries.test.ts'],
  },
  {
    name: 'doctor-cudnn-not-looked-for',
    why: 'cuDNN that libtorch opens on first use is looked for where libtorch_cuda.so would look: it would always be reported missing',
    file: 'packages/triton-node/lib/doctor/pytorch.ts',
    search:
      '    cudnnLinked === undefined && torchCuda?.path ? locateFor(torchCuda.path, CUDNN, search) : null;\n',
    replace: '    null;\n',
    tests: ['packages/triton-node/test/cli/doctor-libraries.test.ts'],
  },
  {
    name: 'doctor-no-free-memory',
    why: "each GPU line gives the GPU's free memory (read in a child): it would be unknown",
    file: 'packages/triton-node/lib/doctor/gpu.ts',
    search: '  const free = d.available ? await freeMemory(d.devices.length, timeoutMs) : [];\n',
    replace: '  const free: Array<number | null> = [];\n',
    tests: ['packages/triton-node/test/gpu/doctor.test.ts'],
    gpu: true,
  },
  {
    name: 'doctor-stub-python-from-path',
    why: "the Python the stub runs is the one its libpython belongs to, where the loader finds it: PATH's would be probed instead",
    file: 'packages/triton-node/lib/doctor/python.ts',
    search: '  const library = stubNeeds.find((n) => n.name === libPython)?.path ?? null;\n',
    replace: '  const library = null;\n',
    tests: ['packages/triton-node/test/cli/doctor.test.ts'],
  },
];
