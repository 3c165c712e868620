# ocr_pre: an RGB image, UINT8 [H, W, 3], to the input of PaddleOCR's text
# detector, FP32 [1, 3, H', W']: the longer side limited to 960 px, each side
# rounded to a multiple of 32 (bilinear, half-pixel centres), then BGR planes
# normalized with PaddleOCR's mean and std. The same steps as preprocess() in
# examples/ocr-steps.ts, in numpy.
import numpy as np
import triton_python_backend_utils as pb_utils

LIMIT_SIDE = 960
MEAN = np.array([0.485, 0.456, 0.406])
STD = np.array([0.229, 0.224, 0.225])


def round_half_up(v):
    return int(np.floor(v + 0.5))


def axis(size_in, size_out):
    # Half-pixel centres, clamped to the image: the source index pair and weight per output index.
    f = np.clip((np.arange(size_out) + 0.5) * (size_in / size_out) - 0.5, 0, size_in - 1)
    i0 = np.floor(f).astype(np.int64)
    i1 = np.minimum(size_in - 1, i0 + 1)
    return i0, i1, f - i0


def preprocess(image):
    if image.ndim != 3 or image.shape[2] != 3:
        raise ValueError("ocr_pre: IMAGE must be [H, W, 3], got %s" % (list(image.shape),))
    h, w = image.shape[0], image.shape[1]
    scale = min(1.0, LIMIT_SIDE / max(w, h))
    width = max(32, round_half_up(w * scale / 32) * 32)
    height = max(32, round_half_up(h * scale / 32) * 32)
    x0, x1, wx = axis(w, width)
    y0, y1, wy = axis(h, height)
    img = image.astype(np.float64)
    wx = wx[None, :, None]
    top = img[y0][:, x0] * (1 - wx) + img[y0][:, x1] * wx
    bottom = img[y1][:, x0] * (1 - wx) + img[y1][:, x1] * wx
    value = (top * (1 - wy[:, None, None]) + bottom * wy[:, None, None]) / 255.0
    # Planes in BGR order, PaddleOCR's mean/std per plane.
    bgr = value[:, :, ::-1]
    out = ((bgr - MEAN) / STD).transpose(2, 0, 1)[None]
    return np.ascontiguousarray(out, dtype=np.float32)


class TritonPythonModel:
    def execute(self, requests):
        responses = []
        for request in requests:
            image = pb_utils.get_input_tensor_by_name(request, "IMAGE").as_numpy()
            x = preprocess(image)
            responses.append(pb_utils.InferenceResponse(output_tensors=[pb_utils.Tensor("x", x)]))
        return responses
