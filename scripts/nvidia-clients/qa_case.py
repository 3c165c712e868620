"""Runs one qa unittest file, printing a JSON line per test: {"name", "status", "reason"}.

qa_case.py <file> <skips JSON: {test method name: reason}>. A test whose subtest failed fails with
that subtest's message. Exits 1 when a test failed.
"""

import importlib.util
import json
import os
import sys
import traceback
import unittest

path, skips = sys.argv[1], json.loads(sys.argv[2])
sys.argv = [path]
sys.path.insert(0, os.path.dirname(path))
spec = importlib.util.spec_from_file_location("qa_under_test", path)
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)


def reason_of(err):
    kind, value, _ = err
    text = "".join(traceback.format_exception_only(kind, value)).strip()
    lines = [line for line in text.splitlines() if line.strip()]
    return " | ".join(lines)[:400]


class Result(unittest.TestResult):
    def __init__(self):
        super().__init__()
        self.cases = {}

    def _name(self, test):
        return "{}.{}".format(type(test).__name__, test._testMethodName)

    def _set(self, test, status, reason=""):
        name = self._name(test)
        if self.cases.get(name, {}).get("status") == "FAIL":
            return
        self.cases[name] = {"name": name, "status": status, "reason": reason}

    def addSuccess(self, test):
        super().addSuccess(test)
        self._set(test, "PASS")

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self._set(test, "FAIL", reason_of(err))

    def addError(self, test, err):
        super().addError(test, err)
        self._set(test, "FAIL", reason_of(err))

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        self._set(test, "SKIP", reason)

    def addSubTest(self, test, subtest, err):
        super().addSubTest(test, subtest, err)
        if err is not None:
            self._set(test, "FAIL", "{}: {}".format(subtest._subDescription(), reason_of(err)))


suite = unittest.defaultTestLoader.loadTestsFromModule(module)


def flatten(s):
    for t in s:
        if isinstance(t, unittest.TestSuite):
            yield from flatten(t)
        else:
            yield t


for test in flatten(suite):
    if test._testMethodName in skips:
        setattr(test, test._testMethodName, unittest.skip(skips[test._testMethodName])(
            getattr(test, test._testMethodName)))

result = Result()
suite.run(result)
failed = False
for case in sorted(result.cases.values(), key=lambda c: c["name"]):
    print(json.dumps(case), flush=True)
    failed = failed or case["status"] == "FAIL"
sys.exit(1 if failed else 0)
