"""NVIDIA's Python client examples and protocol tests against `triton-node serve`.

Run by ./run (Debian's /usr/bin/python3, which sees Debian's grpcio, numpy, gevent, ...). Reads the
client's Python package from its source (src/python/library/tritonclient, stubs generated here from
the common repository's protos as the client's build does), builds the model repositories the examples
and the qa files expect, starts `serve` on free ports, runs every case and prints one line each:
PASS/FAIL/SKIP/KNOWN name: reason, then `N passed, M failed, K skipped, J known differences`. Exits 1
when a case failed (a KNOWN case is a failure serve keeps on purpose, with its reason).
"""

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
PY = sys.executable

# The examples the qa scripts run (L0_http, L0_grpc), and the other examples that apply to a CPU
# server. Each: (file, extra args, serve instance). 'http' and 'grpc' serve every model at start
# (their repositories are L0_http's and L0_grpc's: the examples count 7 and 8 models); '..._explicit'
# is the same repository with --model-control-mode=explicit.
EXAMPLES = [
    ("simple_http_health_metadata.py", ["-v"], "http"),
    ("simple_http_aio_infer_client.py", ["-v"], "http"),
    ("simple_http_infer_client.py", ["-v"], "http"),
    ("simple_http_async_infer_client.py", ["-v"], "http"),
    ("simple_http_string_infer_client.py", ["-v"], "http"),
    ("simple_http_sequence_sync_infer_client.py", ["-v"], "http"),
    ("simple_http_shm_client.py", ["-v"], "http"),
    ("simple_http_shm_string_client.py", ["-v"], "http"),
    ("reuse_infer_objects_client.py", ["-v", "-i", "http"], "http"),
    ("memory_growth_test.py", ["-i", "http", "-r", "20"], "http"),
    ("simple_http_model_control.py", ["-v"], "http_explicit"),
    ("simple_grpc_health_metadata.py", ["-v"], "grpc"),
    ("simple_grpc_aio_infer_client.py", ["-v"], "grpc"),
    ("simple_grpc_aio_sequence_stream_infer_client.py", ["-v"], "grpc"),
    ("simple_grpc_infer_client.py", ["-v"], "grpc"),
    ("simple_grpc_async_infer_client.py", ["-v"], "grpc"),
    ("simple_grpc_string_infer_client.py", ["-v"], "grpc"),
    ("simple_grpc_sequence_stream_infer_client.py", ["-v"], "grpc"),
    ("simple_grpc_sequence_sync_infer_client.py", ["-v"], "grpc"),
    ("simple_grpc_shm_client.py", ["-v"], "grpc"),
    ("simple_grpc_shm_string_client.py", ["-v"], "grpc"),
    ("simple_grpc_keepalive_client.py", ["-v"], "grpc"),
    ("simple_grpc_custom_args_client.py", ["-v"], "grpc"),
    ("simple_grpc_custom_repeat.py", ["-v"], "grpc"),
    ("grpc_explicit_byte_content_client.py", ["-v"], "grpc"),
    ("grpc_explicit_int_content_client.py", ["-v"], "grpc"),
    ("grpc_explicit_int8_content_client.py", ["-v"], "grpc"),
    ("reuse_infer_objects_client.py", ["-v", "-i", "grpc"], "grpc"),
    ("memory_growth_test.py", ["-i", "grpc", "-r", "20"], "grpc"),
    ("simple_grpc_model_control.py", ["-v"], "grpc_explicit"),
]
SKIPPED_EXAMPLES = {
    "simple_http_cudashm_client.py": "CUDA shared memory (no GPU here)",
    "simple_grpc_cudashm_client.py": "CUDA shared memory (no GPU here)",
    "image_client.py": "needs the densenet_onnx model file, downloaded by the server's fetch_models.sh",
    "grpc_image_client.py": "needs the densenet_onnx model file, downloaded by the server's fetch_models.sh",
    "grpc_client.py": "needs the densenet_onnx model file, downloaded by the server's fetch_models.sh",
    "ensemble_image_client.py": "needs the preprocessing ensemble and densenet/inception files (downloaded)",
}
QA_FILES = [
    ("qa/L0_http/python_http_aio_test.py", "http"),
    ("qa/L0_grpc/python_grpc_aio_test.py", "grpc"),
    ("qa/L0_http/http_test.py", "qa_http"),
]
# Cases that cannot run on a CPU machine, with why.
QA_SKIPS = {
    "test_register_cuda_shared_memory": "CUDA shared memory (no GPU here)",
    "test_get_cuda_shared_memory_status": "CUDA shared memory (no GPU here)",
    "test_unregister_cuda_shared_memory": "CUDA shared memory (no GPU here)",
}
# Cases where serve differs from tritonserver on purpose (docs/api.md, "NVIDIA's clients against
# serve", says why): when one fails it is reported KNOWN with the reason, never PASS, and does not
# fail the run. A KNOWN case that passes is a PASS (the difference is gone: remove it here).
KNOWN_DIFFERENCES = {
    "test_content_encoding_chunked_manually": (
        "the request has both Content-Length (added by `requests`) and Transfer-Encoding: chunked; "
        "Node's HTTP parser refuses it with 400 before serve sees it (a request-smuggling guard), "
        "and only --insecure-http-parser, which lifts every such guard, would let it through"
    ),
}
# The models of the server's docs/examples/model_repository the examples use (the image models'
# files are downloaded, see SKIPPED_EXAMPLES).
EXAMPLE_MODELS = [
    "simple",
    "simple_int8",
    "simple_string",
    "simple_sequence",
    "simple_dyna_sequence",
    "simple_identity",
]


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def is_bare(path):
    return os.path.isfile(os.path.join(path, "HEAD")) and os.path.isdir(os.path.join(path, "objects"))


def tree(path, ref, parts, into):
    """A checkout's folder, or the ref's `parts` of a bare git directory read into `into` (git archive:
    a partial mirror may lack blobs outside them, which `git worktree add` would need)."""
    if not is_bare(path):
        return path
    os.makedirs(into, exist_ok=True)
    archive = subprocess.run(
        ["git", "--git-dir", path, "archive", ref, *parts], check=True, capture_output=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", into], input=archive, check=True)
    return into


def stage_client(client, common, stage):
    """tritonclient from the client's source (a tree of links to its files) plus the gRPC stubs,
    generated from common/protobuf and renamed as the client's build_wheel.py does."""
    pkg = os.path.join(stage, "tritonclient")
    subprocess.run(
        ["cp", "-rs", os.path.join(client, "src/python/library/tritonclient"), stage], check=True
    )
    gen = os.path.join(stage, "gen")
    os.makedirs(gen)
    protos = os.path.join(common, "protobuf")
    subprocess.run(
        [PY, "-m", "grpc_tools.protoc", "-I", protos, "--python_out", gen, "--grpc_python_out", gen]
        + [os.path.join(protos, p) for p in ("grpc_service.proto", "model_config.proto", "health.proto")],
        check=True,
    )
    for src, dst in (
        ("model_config_pb2.py", "model_config_pb2.py"),
        ("grpc_service_pb2.py", "service_pb2.py"),
        ("grpc_service_pb2_grpc.py", "service_pb2_grpc.py"),
    ):
        with open(os.path.join(gen, src)) as f:
            text = f.read()
        text = re.sub(r"(?m)^import grpc_(\w+)_pb2 as (\w+)$", r"from tritonclient.grpc import \1_pb2 as \2", text)
        text = re.sub(r"(?m)^import (\w+)_pb2 as (\w+)$", r"from tritonclient.grpc import \1_pb2 as \2", text)
        with open(os.path.join(pkg, "grpc", dst), "w") as f:
            f.write(text)


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def identity_config(name, dtype, dims, inputs=1, max_batch=8, extra=""):
    def tensors(prefix):
        return ",\n".join(
            '  {{ name: "{}{}" data_type: {} dims: [ {} ] }}'.format(prefix, i, dtype, ", ".join(map(str, dims)))
            for i in range(inputs)
        )

    return 'name: "{}"\nbackend: "identity"\nmax_batch_size: {}\ninput [\n{}\n]\noutput [\n{}\n]\n{}'.format(
        name, max_batch, tensors("INPUT"), tensors("OUTPUT"), extra
    )


def build_repositories(server, work):
    """http: the server's example models the examples use and custom_identity_int32
    (memory_growth_test.py), 7 models as in L0_http's directory; grpc: the same and repeat_int32 (this
    repository's test model of Triton's repeat backend, for simple_grpc_custom_repeat.py), 8 as in
    L0_grpc's. qa_http: what qa/L0_http/test.sh gives http_test.py, identity models standing for the
    ONNX identity models of the qa data (same names, data types and shapes: gen_qa_identity_models.py)."""
    source = os.path.join(server, "docs/examples/model_repository")
    repos = {}
    for proto in ("http", "grpc"):
        repo = repos[proto] = os.path.join(work, "models", proto)
        for name in EXAMPLE_MODELS:
            shutil.copytree(os.path.join(source, name), os.path.join(repo, name))
        write(
            os.path.join(repo, "custom_identity_int32/config.pbtxt"),
            identity_config("custom_identity_int32", "TYPE_INT32", [-1]),
        )
        os.makedirs(os.path.join(repo, "custom_identity_int32/1"))
    shutil.copytree(os.path.join(ROOT, "test/models/repeat_int32"), os.path.join(repos["grpc"], "repeat_int32"))

    qa = os.path.join(work, "models", "qa_http")
    for name, dtype, dims, n, extra in (
        ("onnx_zero_1_float32", "TYPE_FP32", [-1], 1, ""),
        ("onnx_zero_1_object", "TYPE_STRING", [-1], 1, ""),
        ("onnx_zero_1_float16", "TYPE_FP16", [-1, -1], 1, ""),
        ("onnx_zero_3_float32", "TYPE_FP32", [-1], 3, ""),
        ("onnx_zero_1_object_1_element", "TYPE_STRING", [1], 1, ""),
        (
            "onnx_zero_1_float32_queue",
            "TYPE_FP32",
            [-1],
            1,
            "dynamic_batching {\n  max_queue_delay_microseconds: 1000000\n  preferred_batch_size: [ 8 ]\n"
            "  default_queue_policy { max_queue_size: 1 }\n}\n",
        ),
    ):
        write(os.path.join(qa, name, "config.pbtxt"), identity_config(name, dtype, dims, n, extra=extra))
        os.makedirs(os.path.join(qa, name, "1"))
    shutil.copytree(os.path.join(source, "simple_identity"), os.path.join(qa, "simple_identity"))
    shutil.copytree(os.path.join(source, "simple_identity"), os.path.join(qa, "simple_identity_int64"))
    cfg = os.path.join(qa, "simple_identity_int64/config.pbtxt")
    with open(cfg) as f:
        text = f.read().replace("TYPE_STRING", "TYPE_INT64").replace("simple_identity", "simple_identity_int64")
    write(cfg, text)
    repos["qa_http"] = qa
    return repos


class Serve:
    """`node dist/cli.js serve` on free ports; the fake engine unless TRITON_SERVER_LIB is set."""

    def __init__(self, name, repository, work, extra=()):
        self.name = name
        self.log_path = os.path.join(work, "serve-{}.log".format(name))
        cmd = ["node", os.path.join(ROOT, "dist/cli.js"), "serve", "--repository", repository]
        cmd += ["--http-port", "0", "--grpc-port", "0", "--host", "127.0.0.1", *extra]
        env = dict(os.environ)
        if os.environ.get("TRITON_SERVER_LIB"):
            cmd += ["--library", os.environ["TRITON_SERVER_LIB"]]
            if os.environ.get("TRITON_BACKEND_DIR"):
                cmd += ["--backend-dir", os.environ["TRITON_BACKEND_DIR"]]
        else:
            cmd += ["--fake-engine"]
            # simple_identity is a Python model: the fake has no Python backend, its stand-in echoes
            # the input (what model.py does).
            env["TRITONFAKE_STAND_INS"] = "python=echo"
        self.log = open(self.log_path, "w")
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=subprocess.STDOUT, env=env, cwd=ROOT)
        self.http = self.grpc = None
        deadline = time.time() + 180
        while time.time() < deadline and self.http is None:
            if self.proc.poll() is not None:
                raise RuntimeError("serve {} exited ({}):\n{}".format(name, self.proc.returncode, self.tail()))
            with open(self.log_path) as f:
                for line in f:
                    try:
                        entry = json.loads(line)
                    except ValueError:
                        continue
                    if entry.get("msg") == "serving":
                        self.http, self.grpc = entry["httpPort"], entry["grpcPort"]
            time.sleep(0.2)
        if self.http is None:
            self.stop()
            raise RuntimeError("serve {} did not start in 180 s:\n{}".format(name, self.tail()))

    def unloaded(self):
        """{model: why} for the models that did not load (the engine's own log lines)."""
        found = {}
        with open(self.log_path) as f:
            for line in f:
                m = re.search(r"failed to load '([^']+)' version \d+: (.*)", line)
                if m:
                    found.setdefault(m.group(1), m.group(2).strip()[:200])
        return found

    def tail(self, n=30):
        with open(self.log_path) as f:
            return "".join(f.readlines()[-n:])

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()


def last_line(text):
    """The output's last error line (an exception, a FAIL, a status), else its last line."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    errors = [line for line in lines if re.search(r"Error|Exception|FAIL|status =|details =|^\[", line)
              and not line.startswith(("File ", "raise ", "warnings.warn"))]
    pick = errors or lines
    return pick[-1][:300] if pick else "(no output)"


def with_ports(path, serve, into):
    """A copy of `path` whose hard-coded localhost:8000 / :8001 name serve's ports."""
    with open(path) as f:
        text = f.read()
    text = text.replace("localhost:8000", "localhost:{}".format(serve.http))
    text = text.replace("localhost:8001", "localhost:{}".format(serve.grpc))
    write(into, text)
    return into


class Results:
    def __init__(self):
        self.counts = {"PASS": 0, "FAIL": 0, "SKIP": 0, "KNOWN": 0}

    def add(self, status, name, reason=""):
        known = [why for case, why in KNOWN_DIFFERENCES.items() if name.endswith("." + case)]
        if status == "FAIL" and known:
            status, reason = "KNOWN", "{} (it failed: {})".format(known[0], reason)
        self.counts[status] += 1
        print("{} {}{}".format(status, name, ": " + reason if reason else ""), flush=True)


def run_example(results, examples_dir, file, args, serve, work, env):
    name = "example {} {}".format(file, " ".join(a for a in args if a != "-v")).strip()
    path = os.path.join(examples_dir, file)
    with open(path) as f:
        takes_url = '"--url"' in f.read()
    if takes_url:
        grpc = file.startswith(("simple_grpc", "grpc_")) or "grpc" in args
        cmd = [PY, path, *args, "-u", "localhost:{}".format(serve.grpc if grpc else serve.http)]
    else:
        cmd = [PY, with_ports(path, serve, os.path.join(work, "examples", file)), *args]
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env, cwd=work)
    except subprocess.TimeoutExpired:
        results.add("FAIL", name, "timed out after 300 s")
        return
    text = out.stdout + out.stderr
    log_path = os.path.join(work, "logs", re.sub(r"\W+", "_", name) + ".log")
    write(log_path, text)
    if out.returncode != 0:
        results.add("FAIL", name, "exit {}: {}".format(out.returncode, last_line(text)))
    elif file.endswith("model_control.py") and "PASS" not in text:
        results.add("FAIL", name, "no PASS line (qa greps for it)")
    else:
        results.add("PASS", name)


def run_base_path(results, examples_dir, serve, work, env):
    """L0_http: simple_http_infer_client.py with a base path in the URL must fail, having POSTed to it."""
    name = "example simple_http_infer_client.py -u <host>/base_path (must fail)"
    out = subprocess.run(
        [PY, os.path.join(examples_dir, "simple_http_infer_client.py"), "-v", "-u",
         "localhost:{}/base_path".format(serve.http)],
        capture_output=True, text=True, timeout=120, env=env, cwd=work,
    )
    text = out.stdout + out.stderr
    if out.returncode == 0:
        results.add("FAIL", name, "it succeeded")
    elif "POST /base_path/v2/models/simple/infer" not in text:
        results.add("FAIL", name, "no POST to the base path: " + last_line(text))
    else:
        results.add("PASS", name)


def mem_available_gib():
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) / (1 << 20)
    return 0.0


def run_qa(results, server, rel, serve, work, env):
    folder = os.path.join(work, "qa", os.path.basename(os.path.dirname(rel)))
    common = os.path.join(work, "qa", "common")
    if not os.path.exists(common):
        os.makedirs(os.path.dirname(common), exist_ok=True)
        os.symlink(os.path.join(server, "qa/common"), common)
    target = with_ports(os.path.join(server, rel), serve, os.path.join(folder, os.path.basename(rel)))
    skips = dict(QA_SKIPS)
    need = 14.0
    if mem_available_gib() < need:
        skips["test_loading_large_invalid_model"] = (
            "sends a 2.9 GB body: needs about {:.0f} GiB for the client, {:.1f} GiB available".format(
                need, mem_available_gib()))
    out = subprocess.run(
        [PY, os.path.join(HERE, "qa_case.py"), target, json.dumps(skips)],
        capture_output=True, text=True, timeout=1800, env=env, cwd=folder,
    )
    write(os.path.join(work, "logs", os.path.basename(rel) + ".log"), out.stderr)
    seen = 0
    for line in out.stdout.splitlines():
        if not line.startswith("{"):
            continue
        case = json.loads(line)
        seen += 1
        results.add(case["status"], "qa {}::{}".format(rel, case["name"]), case.get("reason", ""))
    if out.returncode not in (0, 1) or seen == 0:
        results.add("FAIL", "qa " + rel, "the file did not run: " + last_line(out.stderr))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--client", default=os.environ.get("NV_CLIENT"))
    parser.add_argument("--server", default=os.environ.get("NV_SERVER"))
    parser.add_argument("--common", default=os.environ.get("NV_COMMON"))
    parser.add_argument("--ref", default="r25.07", help="the branch read from a bare git directory")
    parser.add_argument("--keep", action="store_true", help="keep the work folder (logs, repositories)")
    parser.add_argument("--only", help="a regular expression: run the cases whose file matches")
    flags = parser.parse_args()
    for what in ("client", "server", "common"):
        if not getattr(flags, what):
            parser.error("--{0} (or NV_{1}): a triton-inference-server/{0} checkout or bare git directory"
                         .format(what, what.upper()))
    if not os.path.isfile(os.path.join(ROOT, "dist/cli.js")):
        parser.error("no dist/cli.js: npm run build:ts first")

    work = tempfile.mkdtemp(prefix="nvidia-clients-")
    log("work folder: " + work)
    client = tree(flags.client, flags.ref, ["src/python"], os.path.join(work, "src", "client"))
    server = tree(flags.server, flags.ref, ["qa/L0_http", "qa/L0_grpc", "qa/common", "docs/examples"],
                  os.path.join(work, "src", "server"))
    common = tree(flags.common, flags.ref, ["protobuf"], os.path.join(work, "src", "common"))
    stage = os.path.join(work, "py")
    os.makedirs(stage)
    stage_client(client, common, stage)
    repos = build_repositories(server, work)
    env = dict(os.environ, PYTHONPATH=stage, PYTHONUNBUFFERED="1")
    engine = "real Triton ({})".format(os.environ["TRITON_SERVER_LIB"]) if os.environ.get(
        "TRITON_SERVER_LIB") else "the fake engine"
    print("# NVIDIA's clients ({}) against triton-node serve on {}".format(flags.ref, engine), flush=True)

    results = Results()
    examples_dir = os.path.join(client, "src/python/examples")
    only = re.compile(flags.only) if flags.only else None
    wanted = lambda f: only is None or only.search(f)  # noqa: E731
    for file, reason in SKIPPED_EXAMPLES.items():
        if wanted(file):
            results.add("SKIP", "example " + file, reason)
    plan = {name: [] for name in ("http", "http_explicit", "grpc", "grpc_explicit", "qa_http")}
    for file, args, instance in EXAMPLES:
        if wanted(file):
            plan[instance].append(("example", file, args))
    for rel, instance in QA_FILES:
        if wanted(rel):
            plan[instance].append(("qa", rel, None))
    if wanted("simple_http_infer_client.py"):
        plan["http"].append(("base_path", "simple_http_infer_client.py", None))
    told = set()
    for instance, cases in plan.items():
        if not cases:
            continue
        repository = repos[instance.split("_explicit")[0]]
        extra = ["--model-control-mode", "explicit"] if instance.endswith("_explicit") else []
        try:
            serve = Serve(instance, repository, work, extra)
        except RuntimeError as error:
            for kind, file, _ in cases:
                results.add("FAIL", "{} {}".format(kind, file), "serve did not start: " + last_line(str(error)))
            log(str(error))
            continue
        log("serve {}: http {} grpc {}".format(instance, serve.http, serve.grpc))
        for model, why in sorted(serve.unloaded().items()):
            if model not in told:
                told.add(model)
                print("# not loaded on this engine: {}: {}".format(model, why), flush=True)
        try:
            for kind, file, args in cases:
                if kind == "example":
                    run_example(results, examples_dir, file, args, serve, work, env)
                elif kind == "base_path":
                    run_base_path(results, examples_dir, serve, work, env)
                else:
                    run_qa(results, server, file, serve, work, env)
        finally:
            serve.stop()
    c = results.counts
    print("{} passed, {} failed, {} skipped, {} known differences".format(
        c["PASS"], c["FAIL"], c["SKIP"], c["KNOWN"]), flush=True)
    if flags.keep:
        log("kept: " + work)
    else:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if c["FAIL"] else 0


if __name__ == "__main__":
    sys.exit(main())
