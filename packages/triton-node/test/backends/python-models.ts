/**
 * Python models of our own for the tests of Triton's Python backend: a model
 * repository written at run time into a directory the caller names (a temp
 * dir), each model as `<model>/config.pbtxt` + `<model>/1/model.py`.
 *
 * - ocr_pre: an image, UINT8 HWC [H, W, 3] (R, G, B) → the PaddleOCR
 *   detector's input, FP32 [1, 3, H', W']: the rules of examples/ocr-detect.ts
 *   (longer side limited to 960, each side rounded to a multiple of 32,
 *   bilinear with half-pixel centres, / 255, BGR planes with PaddleOCR's
 *   mean/std), in numpy.
 * - ocr_post: the detector's map, FP32 [1, 1, H, W] → BOXES FP32 [N, 4]
 *   (x, y, width, height in map pixels) and SCORES FP32 [N]: the map over 0.3,
 *   8-connected components, a component kept when its sides are at least 3
 *   and its mean at least 0.6, grown by DB's unclip (ratio 1.5) and clipped
 *   to the map: the example's boxesOf, in Python and numpy.
 * - ocr_pipeline: an ensemble IMAGE → ocr_pre → ocr_det (ONNX, from
 *   test/backends/real-models.ts) → ocr_post → BOXES, SCORES.
 * - py_add: SUM = A + B (FP32 [-1]).
 * - bls_add: calls py_add from Python (BLS) with (A, B) and (SUM, B):
 *   OUT = A + 2B.
 * - bls_ocr: the pipeline's three steps as BLS calls from one Python model.
 * - bls_error: a BLS call to a model (MODEL, a string input) whose error it
 *   raises as its own, prefixed "bls_error: ".
 * - bls_identity: calls identity_fp32 (test/models, the identity backend)
 *   from Python, which r25.07 refuses (below).
 * - py_raise: raises a ValueError with PY_RAISE_MESSAGE in execute().
 * - py_sleep: sleeps MS milliseconds (INT32 [1]) and answers MS back: a
 *   request that stays in the stub while a test kills it or stops the server.
 *   Before it sleeps it appends its stub's pid to `py_sleep/started` (see
 *   sleepingStubs()), so a test knows when a request is in a stub.
 *
 * BLS cannot call the identity backend: python_backend refuses a response
 * that carries a double parameter, and the identity backend sets one (an
 * upstream limit, see docs/backends.md): bls_identity shows it; the other
 * BLS models call Python and ONNX models.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The message py_raise raises (a ValueError). */
export const PY_RAISE_MESSAGE = 'py_raise refused the request: tn-7f3a-exception';

export type PythonModelName =
  | 'ocr_pre'
  | 'ocr_post'
  | 'ocr_pipeline'
  | 'py_add'
  | 'bls_add'
  | 'bls_ocr'
  | 'bls_error'
  | 'bls_identity'
  | 'py_raise'
  | 'py_sleep';

export const PYTHON_MODEL_NAMES: readonly PythonModelName[] = [
  'ocr_pre',
  'ocr_post',
  'ocr_pipeline',
  'py_add',
  'bls_add',
  'bls_ocr',
  'bls_error',
  'bls_identity',
  'py_raise',
  'py_sleep',
];

/** The models each one calls (BLS) or runs (ensemble), besides itself. */
export const PYTHON_MODEL_NEEDS: Readonly<Record<PythonModelName, readonly string[]>> = {
  ocr_pre: [],
  ocr_post: [],
  ocr_pipeline: ['ocr_pre', 'ocr_det', 'ocr_post'],
  py_add: [],
  bls_add: ['py_add'],
  bls_ocr: ['ocr_pre', 'ocr_det', 'ocr_post'],
  bls_error: [],
  bls_identity: ['identity_fp32'],
  py_raise: [],
  py_sleep: [],
};

const IMPORTS = `import numpy as np
import triton_python_backend_utils as pb_utils
`;

/** The OCR steps' own files: the repository examples/ocr-pipeline.ts serves. */
const OCR_EXAMPLE = fileURLToPath(new URL('../../examples/ocr-pipeline', import.meta.url));

/** A file of the example's repository; `count: 2` becomes the asked instance count. */
function ocrExample(file: string, instances?: number): string {
  const text = readFileSync(join(OCR_EXAMPLE, file), 'utf8');
  return instances === undefined ? text : text.replace(/\bcount: 2\b/, `count: ${instances}`);
}

const ADD_PY = `${IMPORTS}

class TritonPythonModel:
    def execute(self, requests):
        responses = []
        for request in requests:
            a = pb_utils.get_input_tensor_by_name(request, "A").as_numpy()
            b = pb_utils.get_input_tensor_by_name(request, "B").as_numpy()
            responses.append(pb_utils.InferenceResponse(output_tensors=[pb_utils.Tensor("SUM", a + b)]))
        return responses
`;

/** A BLS call that raises the callee's error as a Python exception. */
const BLS_CALL = `
def call(model, inputs, outputs):
    request = pb_utils.InferenceRequest(model_name=model, inputs=inputs, requested_output_names=outputs)
    response = request.exec()
    if response.has_error():
        raise pb_utils.TritonModelException(response.error().message())
    return [pb_utils.get_output_tensor_by_name(response, name) for name in outputs]
`;

const BLS_ADD_PY = `${IMPORTS}${BLS_CALL}

class TritonPythonModel:
    def execute(self, requests):
        responses = []
        for request in requests:
            a = pb_utils.get_input_tensor_by_name(request, "A")
            b = pb_utils.get_input_tensor_by_name(request, "B")
            (first,) = call("py_add", [a, b], ["SUM"])
            (second,) = call("py_add", [pb_utils.Tensor("A", first.as_numpy()), b], ["SUM"])
            out = pb_utils.Tensor("OUT", second.as_numpy())
            responses.append(pb_utils.InferenceResponse(output_tensors=[out]))
        return responses
`;

const BLS_OCR_PY = `${IMPORTS}${BLS_CALL}

class TritonPythonModel:
    def execute(self, requests):
        responses = []
        for request in requests:
            image = pb_utils.get_input_tensor_by_name(request, "IMAGE")
            (x,) = call("ocr_pre", [image], ["x"])
            (prob,) = call("ocr_det", [x], ["sigmoid_0.tmp_0"])
            boxes, scores = call("ocr_post", [pb_utils.Tensor("PROB", prob.as_numpy())], ["BOXES", "SCORES"])
            out = [pb_utils.Tensor("BOXES", boxes.as_numpy()), pb_utils.Tensor("SCORES", scores.as_numpy())]
            responses.append(pb_utils.InferenceResponse(output_tensors=out))
        return responses
`;

const BLS_ERROR_PY = `${IMPORTS}

class TritonPythonModel:
    def execute(self, requests):
        responses = []
        for request in requests:
            model = pb_utils.get_input_tensor_by_name(request, "MODEL").as_numpy()[0].decode()
            inputs = [pb_utils.Tensor("A", np.array([1.0], dtype=np.float32))]
            response = pb_utils.InferenceRequest(
                model_name=model, inputs=inputs, requested_output_names=["SUM"]
            ).exec()
            if response.has_error():
                raise pb_utils.TritonModelException("bls_error: " + response.error().message())
            out = pb_utils.Tensor("OUT", np.array([0], dtype=np.int32))
            responses.append(pb_utils.InferenceResponse(output_tensors=[out]))
        return responses
`;

const BLS_IDENTITY_PY = `${IMPORTS}${BLS_CALL}

class TritonPythonModel:
    def execute(self, requests):
        responses = []
        for request in requests:
            x = pb_utils.get_input_tensor_by_name(request, "INPUT0").as_numpy()
            (y,) = call("identity_fp32", [pb_utils.Tensor("INPUT0", x[None])], ["OUTPUT0"])
            out = pb_utils.Tensor("OUTPUT0", y.as_numpy()[0])
            responses.append(pb_utils.InferenceResponse(output_tensors=[out]))
        return responses
`;

const RAISE_PY = `${IMPORTS}

class TritonPythonModel:
    def execute(self, requests):
        raise ValueError(${JSON.stringify(PY_RAISE_MESSAGE)})
`;

const SLEEP_PY = `import os
import time

${IMPORTS}

class TritonPythonModel:
    def initialize(self, args):
        self.started = os.path.join(args["model_repository"], "started")

    def execute(self, requests):
        responses = []
        for request in requests:
            ms = pb_utils.get_input_tensor_by_name(request, "MS").as_numpy()
            with open(self.started, "a", encoding="utf-8") as f:
                f.write(f"{os.getpid()}\\n")
            time.sleep(int(ms[0]) / 1000.0)
            responses.append(pb_utils.InferenceResponse(output_tensors=[pb_utils.Tensor("MS_OUT", ms)]))
        return responses
`;

interface PythonModel {
  config: string;
  /** model.py; none for the ensemble. */
  source?: string;
}

function pythonConfig(name: string, io: string, instances = 1): string {
  return `name: "${name}"
backend: "python"
max_batch_size: 0
${io}
instance_group [ { kind: KIND_CPU count: ${instances} } ]
`;
}

const IMAGE_IN = 'input [ { name: "IMAGE" data_type: TYPE_UINT8 dims: [ -1, -1, 3 ] } ]';
const BOXES_OUT = `output [
  { name: "BOXES" data_type: TYPE_FP32 dims: [ -1, 4 ] },
  { name: "SCORES" data_type: TYPE_FP32 dims: [ -1 ] }
]`;
const AB_IN = `input [
  { name: "A" data_type: TYPE_FP32 dims: [ -1 ] },
  { name: "B" data_type: TYPE_FP32 dims: [ -1 ] }
]`;

export interface PythonRepositoryOptions {
  /** Which models to write (default: all). */
  models?: readonly PythonModelName[];
  /** instance_group count of ocr_pre and ocr_post (default 2). */
  ocrInstances?: number;
}

function pythonModels(o: PythonRepositoryOptions): Record<PythonModelName, PythonModel> {
  const n = o.ocrInstances ?? 2;
  return {
    ocr_pre: { config: ocrExample('ocr_pre/config.pbtxt', n), source: ocrExample('ocr_pre/1/model.py') },
    ocr_post: { config: ocrExample('ocr_post/config.pbtxt', n), source: ocrExample('ocr_post/1/model.py') },
    ocr_pipeline: { config: ocrExample('ocr_pipeline/config.pbtxt') },
    py_add: {
      config: pythonConfig(
        'py_add',
        `${AB_IN}\noutput [ { name: "SUM" data_type: TYPE_FP32 dims: [ -1 ] } ]`,
      ),
      source: ADD_PY,
    },
    bls_add: {
      config: pythonConfig(
        'bls_add',
        `${AB_IN}\noutput [ { name: "OUT" data_type: TYPE_FP32 dims: [ -1 ] } ]`,
      ),
      source: BLS_ADD_PY,
    },
    bls_ocr: { config: pythonConfig('bls_ocr', `${IMAGE_IN}\n${BOXES_OUT}`), source: BLS_OCR_PY },
    bls_error: {
      config: pythonConfig(
        'bls_error',
        `input [ { name: "MODEL" data_type: TYPE_STRING dims: [ 1 ] } ]
output [ { name: "OUT" data_type: TYPE_INT32 dims: [ 1 ] } ]`,
      ),
      source: BLS_ERROR_PY,
    },
    bls_identity: {
      config: pythonConfig(
        'bls_identity',
        `input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ -1 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ -1 ] } ]`,
      ),
      source: BLS_IDENTITY_PY,
    },
    py_raise: {
      config: pythonConfig(
        'py_raise',
        `input [ { name: "IN" data_type: TYPE_INT32 dims: [ 1 ] } ]
output [ { name: "OUT" data_type: TYPE_INT32 dims: [ 1 ] } ]`,
      ),
      source: RAISE_PY,
    },
    py_sleep: {
      config: pythonConfig(
        'py_sleep',
        `input [ { name: "MS" data_type: TYPE_INT32 dims: [ 1 ] } ]
output [ { name: "MS_OUT" data_type: TYPE_INT32 dims: [ 1 ] } ]`,
        2,
      ),
      source: SLEEP_PY,
    },
  };
}

/** The config.pbtxt text of one model, as makePythonModelRepository writes it. */
export function pythonModelConfig(name: PythonModelName, options: PythonRepositoryOptions = {}): string {
  return pythonModels(options)[name].config;
}

/**
 * Writes the Python models into `dir` (made if missing; the chosen models'
 * folders are replaced) and returns `dir`. ocr_pipeline and bls_ocr also need
 * ocr_det (test/backends/real-models.ts makeRealModelRepository into the same dir).
 */
export function makePythonModelRepository(dir: string, options: PythonRepositoryOptions = {}): string {
  const models = pythonModels(options);
  mkdirSync(dir, { recursive: true });
  for (const name of options.models ?? PYTHON_MODEL_NAMES) {
    const modelDir = join(dir, name);
    rmSync(modelDir, { recursive: true, force: true });
    mkdirSync(join(modelDir, '1'), { recursive: true });
    writeFileSync(join(modelDir, 'config.pbtxt'), models[name].config);
    const source = models[name].source;
    if (source !== undefined) writeFileSync(join(modelDir, '1', 'model.py'), source);
  }
  return dir;
}

/** The pids of the py_sleep stubs that began a request so far, in `repository` (a request each). */
export function sleepingStubs(repository: string): number[] {
  try {
    return readFileSync(join(repository, 'py_sleep', 'started'), 'utf8')
      .split('\n')
      .filter((l) => l !== '')
      .map(Number);
  } catch {
    return [];
  }
}
