#!/usr/bin/env python3
"""outlive's promises, checked from Python through `outlive serve`.

    python3 demo.py --storage DIR [--mode standalone] [-- OUTLIVE_COMMAND…]

Runs a task and receives its completion; runs a second task and SIGKILLs the
server while it runs; starts a new server and receives that task's completion
exactly once, with its real exit code (7), and acks it; then a third server
must send no completion for anything acknowledged. Prints a short report, then
one JSON line (the last line of stdout), and exits 1 on any broken promise.
OUTLIVE_COMMAND defaults to `outlive` (on PATH); `node dist/scripts/bin.js`
runs a checkout's build.
"""

import argparse
import json
import os
import shutil
import sys
import tempfile
import time

from outlive_client import RpcError, Server, ServerGone

# The survivor's exit code: distinctive, so a code made up by a replay (0, 1, 137) cannot pass for it.
SURVIVOR_EXIT_CODE = 7


class Demo:
    def __init__(self, argv, timeout, settle):
        self.argv = argv
        self.timeout = timeout
        self.settle = settle
        self.servers = []
        self.deliveries = []
        self.problems = []

    def start_server(self):
        n = len(self.servers) + 1
        server = Server(self.argv)
        init = server.initialize("outlive-python-demo")
        server.call("completions/subscribe", {})
        self.servers.append({"n": n, "pid": server.pid, "role": init.get("role"), "protocolVersion": init.get("protocolVersion"),
                             "placement": init.get("placement"), "replay": init.get("replay")})
        return n, server

    def completion_of(self, n, server, task_id):
        """Waits for task_id's completion on server n; every completion seen on the way is a delivery too."""
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:
            record = server.next_notification("completion", timeout=deadline - time.monotonic())
            if record is None:
                break
            self.deliveries.append({"server": n, "id": record["id"], "state": record["state"], "exitCode": record.get("exitCode")})
            if record["id"] == task_id:
                return record
        self.problems.append(f"server {n} sent no completion for {task_id} within {self.timeout} s")
        return None

    def settle_on(self, n, server):
        """Listens a little longer, so a late duplicate is seen rather than missed."""
        deadline = time.monotonic() + self.settle
        while True:
            record = server.next_notification("completion", timeout=max(0.0, deadline - time.monotonic()))
            if record is None:
                return
            self.deliveries.append({"server": n, "id": record["id"], "state": record["state"], "exitCode": record.get("exitCode")})

    def expect(self, ok, problem):
        if not ok:
            self.problems.append(problem)
        return ok


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--storage", required=True, help="the storage directory every server of the demo opens")
    parser.add_argument("--mode", help="serve's --mode (default: serve's own, daemon)")
    parser.add_argument("--timeout-seconds", type=float, default=30.0, help="bound on each wait for an answer or a completion (default 30)")
    parser.add_argument("--settle-ms", type=int, default=500, help="how long to listen for a late duplicate after each expected completion (default 500)")
    parser.add_argument("outlive", nargs="*", help="the outlive command (default: outlive)")
    args = parser.parse_args()
    outlive = args.outlive or ["outlive"]
    serve = [*outlive, "serve", "--storage", args.storage, *(["--mode", args.mode] if args.mode else [])]
    demo = Demo(serve, args.timeout_seconds, args.settle_ms / 1000)
    scratch = tempfile.mkdtemp(prefix="outlive-python-demo-")
    release = os.path.join(scratch, "release")
    tasks = {}
    report = {"client": "python", "tasks": tasks, "servers": demo.servers, "deliveries": demo.deliveries, "problems": demo.problems}
    try:
        run(demo, release, tasks, report)
    except (RpcError, ServerGone, TimeoutError) as error:
        demo.problems.append(f"{type(error).__name__}: {error}")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    report["ok"] = not demo.problems
    for line in summary(report):
        print(line)
    print(json.dumps(report, separators=(",", ":")))
    return 0 if report["ok"] else 1


def run(demo, release, tasks, report):
    # Server 1: a task runs and its completion arrives, with its exit code.
    n, server = demo.start_server()
    first = server.call("run", {"shell": "echo first; exit 3"})
    tasks["first"] = first["id"]
    done = demo.completion_of(n, server, first["id"])
    demo.expect(done is not None and done["state"] == "exited" and done.get("exitCode") == 3, f"first task: expected exited 3, got {done}")
    server.call("ack", {"id": first["id"]})
    # outlive's own failures are JSON-RPC errors whose data says which (E_NO_TASK, …).
    try:
        server.call("get", {"id": "no-such-task"})
        report["unknownTaskError"] = None
    except RpcError as error:
        report["unknownTaskError"] = {"code": error.code, "dataCode": (error.data or {}).get("code")}
    demo.expect(report["unknownTaskError"] == {"code": -32000, "dataCode": "E_NO_TASK"}, f"get of an unknown id: expected error -32000 E_NO_TASK, got {report['unknownTaskError']}")

    # A second task, still running when the server is SIGKILLed; it exits 7 only after the kill.
    survivor = server.call("run", {"shell": f"echo started; while [ ! -e '{release}' ]; do sleep 0.05; done; exit {SURVIVOR_EXIT_CODE}"})
    tasks["survivor"] = survivor["id"]
    deadline = time.monotonic() + demo.timeout
    while b"started" not in server.output(survivor["id"]) and time.monotonic() < deadline:
        time.sleep(0.05)
    state = server.call("get", {"id": survivor["id"]})["state"]
    report["survivorStateAtKill"] = state
    demo.expect(state == "running", f"survivor: expected running before the kill, got {state}")
    demo.settle_on(n, server)
    server.kill()
    open(release, "w").close()

    # Server 2: the survivor's completion, once, with its real exit code; then the ack.
    n, server = demo.start_server()
    done = demo.completion_of(n, server, survivor["id"])
    demo.expect(done is not None and done["state"] == "exited" and done.get("exitCode") == SURVIVOR_EXIT_CODE,
                f"survivor: expected exited {SURVIVOR_EXIT_CODE} after the restart, got {done}")
    report["ackedAt"] = server.call("ack", {"id": survivor["id"]}).get("acknowledgedAt")
    # A task run after the ack marks the point by which any duplicate would have come.
    marker = server.call("run", {"argv": ["true"]})
    tasks["marker2"] = marker["id"]
    demo.completion_of(n, server, marker["id"])
    server.call("ack", {"id": marker["id"]})
    demo.settle_on(n, server)
    server.call("drain", {"reason": "restart"})
    server.close()

    # Server 3: everything acknowledged stays acknowledged.
    n, server = demo.start_server()
    marker = server.call("run", {"argv": ["true"]})
    tasks["marker3"] = marker["id"]
    demo.completion_of(n, server, marker["id"])
    server.call("ack", {"id": marker["id"]})
    demo.settle_on(n, server)
    server.call("drain", {"reason": "restart"})
    server.close()

    judge(demo, tasks)


def judge(demo, tasks):
    """The promises, from the deliveries alone."""
    def of(task_id):
        return [d for d in demo.deliveries if d["id"] == task_id]

    survivor = of(tasks["survivor"])
    demo.expect(len(survivor) == 1, f"survivor: expected exactly one completion, got {len(survivor)}: {survivor}")
    demo.expect(all(d["server"] == 2 for d in survivor), f"survivor: expected its completion from the server started after the kill, got {survivor}")
    first = of(tasks["first"])
    demo.expect(len(first) == 1 and first[0]["server"] == 1, f"first task: expected one completion, from server 1, got {first}")
    late = [d for d in demo.deliveries if d["server"] == 3 and d["id"] != tasks["marker3"]]
    demo.expect(not late, f"server 3 sent completions of acknowledged tasks: {late}")
    unknown = [d for d in demo.deliveries if d["id"] not in tasks.values()]
    demo.expect(not unknown, f"completions of tasks this demo never ran: {unknown}")


def summary(report):
    lines = [f"outlive from Python: {'every promise held' if report['ok'] else 'BROKEN PROMISES'}"]
    for s in report["servers"]:
        replay = s.get("replay") or {}
        lines.append(f"  server {s['n']} (pid {s['pid']}, {s['role']}): replay adopted {replay.get('adopted', [])}, finished {[f['id'] for f in replay.get('finished', [])]}")
    for d in report["deliveries"]:
        name = next((k for k, v in report["tasks"].items() if v == d["id"]), d["id"])
        lines.append(f"  completion from server {d['server']}: {name} {d['state']} {d['exitCode']}")
    lines += [f"  PROBLEM: {p}" for p in report["problems"]]
    return lines


if __name__ == "__main__":
    sys.exit(main())
