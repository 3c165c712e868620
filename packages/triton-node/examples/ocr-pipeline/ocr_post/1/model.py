# ocr_post: the detector's probability map, FP32 [1, 1, H, W], to text boxes,
# FP32 [N, 4] as x, y, width, height in map pixels, and their SCORES: DB's
# post-processing with axis-aligned boxes (threshold 0.3, 8-connected
# components kept at a mean probability of 0.6 or more, grown by the unclip
# ratio 1.5). The same steps as boxesOf() in examples/ocr-steps.ts.
import numpy as np
import triton_python_backend_utils as pb_utils

THRESHOLD = 0.3
BOX_THRESHOLD = 0.6
UNCLIP_RATIO = 1.5
MIN_SIDE = 3


def boxes_of(prob):
    height, width = prob.shape
    text = prob > THRESHOLD
    seen = np.zeros(prob.shape, dtype=bool)
    boxes = []
    scores = []
    ys, xs = np.nonzero(text)
    for sy, sx in zip(ys.tolist(), xs.tolist()):
        if seen[sy, sx]:
            continue
        seen[sy, sx] = True
        stack = [(sy, sx)]
        min_x, max_x, min_y, max_y, total, count = width, 0, height, 0, 0.0, 0
        while stack:
            y, x = stack.pop()
            min_x, max_x = min(min_x, x), max(max_x, x)
            min_y, max_y = min(min_y, y), max(max_y, y)
            total += float(prob[y, x])
            count += 1
            for ny in (y - 1, y, y + 1):
                if ny < 0 or ny >= height:
                    continue
                for nx in (x - 1, x, x + 1):
                    if 0 <= nx < width and text[ny, nx] and not seen[ny, nx]:
                        seen[ny, nx] = True
                        stack.append((ny, nx))
        w = max_x - min_x + 1
        h = max_y - min_y + 1
        score = total / count
        if min(w, h) < MIN_SIDE or score < BOX_THRESHOLD:
            continue
        d = w * h * UNCLIP_RATIO / (2 * (w + h))
        x0 = max(0.0, min_x - d)
        y0 = max(0.0, min_y - d)
        x1 = min(float(width), max_x + 1 + d)
        y1 = min(float(height), max_y + 1 + d)
        boxes.append([x0, y0, x1 - x0, y1 - y0])
        scores.append(score)
    return np.array(boxes, dtype=np.float32).reshape(-1, 4), np.array(scores, dtype=np.float32)


class TritonPythonModel:
    def execute(self, requests):
        responses = []
        for request in requests:
            prob = pb_utils.get_input_tensor_by_name(request, "PROB").as_numpy()
            if prob.ndim != 4 or prob.shape[0] != 1 or prob.shape[1] != 1:
                raise ValueError("ocr_post: PROB must be [1, 1, H, W], got %s" % (list(prob.shape),))
            boxes, scores = boxes_of(prob[0, 0])
            responses.append(
                pb_utils.InferenceResponse(
                    output_tensors=[pb_utils.Tensor("BOXES", boxes), pb_utils.Tensor("SCORES", scores)]
                )
            )
        return responses
