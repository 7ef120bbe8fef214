/** soak-long-cgroup-v2: the soak with 500 restarts and tasks in outlive's own cgroups, run by hand (`npm run scenario -- soak-long-cgroup-v2`). */
import { runIfMain } from "../inside/run-if-main.ts";
import { soakScenario } from "./soak.ts";

const scenario = soakScenario("soak-long-cgroup-v2", 500, 3 * 60 * 60 * 1000, "cgroup-v2");
export default scenario;
runIfMain(import.meta.url, scenario.name);
