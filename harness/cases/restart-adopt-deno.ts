/** restart-adopt with the module under Deno (the TypeScript sources, no build step). */
import { runIfMain } from "../inside/run-if-main.ts";
import { restartAdopt } from "./restart-adopt.ts";

const scenario = restartAdopt("restart-adopt-deno", "deno");
export default scenario;
runIfMain(import.meta.url, scenario.name);
