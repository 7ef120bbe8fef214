import { describe, expect, it } from "vitest";
import { pickLeaderCgroup, type CgroupChoice } from "../../lib/census/mod.ts";

const caller = "/user.slice/user-0.slice/session-3.scope";
describe("pickLeaderCgroup", () => {
  const table: [string, CgroupChoice, string | null, string | null, string | RegExp][] = [
    ["a cgroup-v2 task", "auto", "/outlive/outlive-task-t-0123456789abcdef", caller, "/outlive/outlive-task-t-0123456789abcdef"],
    ["a systemd task scope", "auto", "/user.slice/user-0.slice/user@0.service/outlive.slice/outlive-task-t-1.scope", caller, "/user.slice/user-0.slice/user@0.service/outlive.slice/outlive-task-t-1.scope"],
    ["auto, a login session", "auto", caller, caller, /not an outlive task's/],
    ["auto, the root", "auto", "/", caller, /not an outlive task's/],
    ["auto, an app scope", "auto", "/user.slice/user-0.slice/user@0.service/app.slice/run-r1.scope", caller, /not an outlive task's/],
    ["auto, a look-alike", "auto", "/x/outlive-task-", caller, /not an outlive task's/],
    ["auto, the caller inside the task's cgroup", "auto", "/outlive/outlive-task-t-1", "/outlive/outlive-task-t-1", /holds this process too/],
    ["auto, the caller below it", "auto", "/outlive/outlive-task-t-1", "/outlive/outlive-task-t-1/sub", /holds this process too/],
    ["auto, the caller's cgroup unknown", "auto", "/outlive/outlive-task-t-1", null, /cannot be shown/],
    ["no cgroup for the leader", "auto", null, caller, /no cgroup v2 path/],
    ["none", "none", "/outlive/outlive-task-t-1", caller, /not asked for/],
    ["named, the leader inside", { path: "/work/agent-7" }, "/work/agent-7/sub", caller, "/work/agent-7"],
    ["named with a trailing slash", { path: "/work/agent-7/" }, "/work/agent-7", caller, "/work/agent-7"],
    ["named, the leader elsewhere", { path: "/work/agent-7" }, "/work/agent-70", caller, /not in \/work\/agent-7 or below/],
    ["named, the root", { path: "/" }, "/a", caller, /root cgroup/],
    ["named, a session", { path: caller }, caller, "/other", /shared by unrelated/],
    ["named, a slice", { path: "/user.slice" }, caller, "/other", /shared by unrelated/],
    ["named, a user manager", { path: "/user.slice/user-0.slice/user@0.service" }, "/user.slice/user-0.slice/user@0.service/x", "/other", /shared by unrelated/],
    ["named, init.scope", { path: "/init.scope" }, "/init.scope", "/other", /shared by unrelated/],
    ["named, holding the caller", { path: "/work" }, "/work/a", "/work/b", /holds this process too/],
  ];
  for (const [label, choice, leaderCgroup, callerCgroup, expected] of table) {
    it(label, () => {
      const pick = pickLeaderCgroup({ choice, leaderCgroup, callerCgroup });
      if (typeof expected === "string") expect(pick).toMatchObject({ take: true, cgroup: expected });
      else expect(pick.take === false && pick.reason).toMatch(expected);
    });
  }
});
