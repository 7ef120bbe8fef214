export * from "./proc/mod.ts";
