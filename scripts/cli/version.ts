import { outliveVersion } from "../../lib/version.ts";

export { outliveVersion };

/** `outlive --version`: `outlive VERSION` on stdout, exit 0. */
export function printVersion(): number {
  console.log(`outlive ${outliveVersion()}`);
  return 0;
}
