/** restart-adopt with the module under Deno (the TypeScript sources, no build step). */
import { runIfMain } from "../scenario/run-file.ts";
import { restartAdopt } from "./restart-adopt.ts";

const scenario = restartAdopt("restart-adopt-deno", "deno");
export default scenario;
runIfMain(import.meta.url, scenario.name);
