#!/usr/bin/env node
/**
 * `npm run scenarios` (all, on systemd 252 and 257) and
 * `npm run scenario -- NAME [--systemd 252|257]` (one). One container per
 * systemd version; see harness/scenario/cli.ts for the flags.
 */
import { scenarioCli } from "./scenario/cli.ts";

process.exitCode = await scenarioCli(process.argv.slice(2));
