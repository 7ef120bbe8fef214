/**
 * The spawner's program file, as the npm package and the sources run it
 * (`node spawner-main.js --socket …`, spawner-command-line.ts); the single
 * executable runs the same program in its spawner mode. No top-level await:
 * the executable's CommonJS bundle holds what this file calls.
 */
import { runSpawner } from "./spawner-program.ts";

void runSpawner(process.argv.slice(2));
