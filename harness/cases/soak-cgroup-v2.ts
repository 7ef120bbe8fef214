/** soak-cgroup-v2: the soak (12 restarts) with tasks in outlive's own cgroups, run by hand (`npm run scenario -- soak-cgroup-v2`). */
import { runIfMain } from "../inside/run-if-main.ts";
import { soakScenario } from "./soak.ts";

const scenario = soakScenario("soak-cgroup-v2", 12, 150_000, "cgroup-v2");
export default scenario;
runIfMain(import.meta.url, scenario.name);
