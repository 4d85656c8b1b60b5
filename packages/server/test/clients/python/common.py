"""Helpers of the Python-client scenarios (run by python.test.ts, one scenario per process).

A scenario script is invoked as `python3 <script> <kubeconfig> <scenario>`; it runs the function
of that name and exits 0, or fails with a traceback on stderr. When it needs the test to act on
the server (drop every watch, say), it prints one `@@sync <json>` line and waits for the test's
one-line JSON answer on stdin.
"""

import json
import sys
import time

from kubernetes import client, config
from kubernetes.client.rest import ApiException

NS = "default"


def run(scenarios):
    """Loads the kubeconfig given on the command line, then runs the scenario it names."""
    if len(sys.argv) != 3:
        sys.exit("usage: <script> <kubeconfig> <scenario>")
    config.load_kube_config(config_file=sys.argv[1])
    name = sys.argv[2]
    if name not in scenarios:
        sys.exit("unknown scenario %r (have %s)" % (name, ", ".join(sorted(scenarios))))
    scenarios[name]()


def api_client(content_type=None):
    """An ApiClient of the loaded configuration; `content_type` overrides the one the generated
    methods choose (the Python client has no other way to send a merge or apply patch)."""
    c = client.ApiClient()
    if content_type:
        c.set_default_header("Content-Type", content_type)
    return c


def sync(action, **data):
    """Asks the test to act on the server and waits until it has."""
    sys.stdout.write("@@sync %s\n" % json.dumps(dict(action=action, **data)))
    sys.stdout.flush()
    line = sys.stdin.readline()
    if not line:
        raise AssertionError("the test closed stdin while %s was pending" % action)
    return json.loads(line)


def eq(actual, expected, what):
    if actual != expected:
        raise AssertionError("%s: expected %r, got %r" % (what, expected, actual))


def check(cond, what):
    if not cond:
        raise AssertionError(what)


def failure(fn, *args, **kwargs):
    """The ApiException that a call raises (and an AssertionError when it succeeds)."""
    try:
        result = fn(*args, **kwargs)
    except ApiException as e:
        return e
    raise AssertionError("%s succeeded but should have failed: %r" % (fn.__name__, result))


def status_of(exc, code, reason, message=None):
    """Checks that an ApiException carries HTTP `code` and a well-formed Status body of
    `reason` (and `message`, when given); returns the Status as a dict."""
    eq(exc.status, code, "HTTP status of %s" % exc.body)
    headers = {k.lower(): v for k, v in (exc.headers or {}).items()}
    check(
        headers.get("content-type", "").startswith("application/json"),
        "a failure is JSON, not %r" % headers.get("content-type"),
    )
    body = json.loads(exc.body)
    eq(body.get("kind"), "Status", "kind of %s" % exc.body)
    eq(body.get("apiVersion"), "v1", "apiVersion of %s" % exc.body)
    eq(body.get("status"), "Failure", "status of %s" % exc.body)
    eq(body.get("code"), code, "code of %s" % exc.body)
    eq(body.get("reason"), reason, "reason of %s" % exc.body)
    if message is not None:
        eq(body.get("message"), message, "message")
    return body


def page_not_found(exc):
    """Checks that an ApiException is the plain-text 404 of a path no API serves (Go's
    http.NotFound, which kube-apiserver's last handler calls)."""
    eq(exc.status, 404, "HTTP status of %s" % exc.body)
    headers = {k.lower(): v for k, v in (exc.headers or {}).items()}
    eq(headers.get("content-type"), "text/plain; charset=utf-8", "content type of a path no API serves")
    eq(exc.body, "404 page not found\n", "body of a path no API serves")


def eventually(fn, what, timeout=10.0):
    """Polls `fn` until it returns a truthy value (no fixed sleeps as synchronisation)."""
    deadline = time.monotonic() + timeout
    last = None
    while True:
        try:
            v = fn()
            if v:
                return v
        except (ApiException, AssertionError) as e:
            last = e
        if time.monotonic() > deadline:
            raise AssertionError("timed out waiting for %s (%s)" % (what, last))
        time.sleep(0.05)


def gone(read, *args):
    """True once `read(*args)` answers 404."""
    try:
        read(*args)
    except ApiException as e:
        if e.status == 404:
            return True
        raise
    return False
