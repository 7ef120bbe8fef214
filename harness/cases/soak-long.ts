/** soak-long: the soak with 500 restarts, run by hand (`npm run scenario -- soak-long`). */
import { runIfMain } from "../inside/run-if-main.ts";
import { soakScenario } from "./soak.ts";

const scenario = soakScenario("soak-long", 500, 3 * 60 * 60 * 1000);
export default scenario;
runIfMain(import.meta.url, scenario.name);
