#!/usr/bin/env node
/**
 * The entry point of outlive's own scenarios, on the host:
 * `npm run scenarios` (all, on systemd 252 and 257) and
 * `npm run scenario -- NAME [--systemd 252|257]` (one). One container per
 * systemd version; see harness/host/cli.ts for the flags.
 */
import { scenarioCli } from "./host/cli.ts";

process.exitCode = await scenarioCli(process.argv.slice(2));
