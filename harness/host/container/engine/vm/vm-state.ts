import type { ProcessIdentity } from "../../../../../lib/proc/identity.ts";
import type { CommonState } from "../../state.ts";
import type { AccelChoice } from "./accel-probe.ts";
import type { Share, VmPaths } from "./qemu.ts";

/** What the vm engine saves of a running guest, so another process (`cli.ts exec|down NAME`) and its teardown find it again. */
export interface VmState extends CommonState {
  engine: "vm";
  /** The qemu process; signalled only while its start time still matches. */
  qemu: ProcessIdentity;
  accel: AccelChoice;
  /** The guest image's cache entry the overlay is on. */
  image: string;
  paths: VmPaths;
  shares: Share[];
  /** The host's Node binary's name in its shared directory. */
  nodeBinary: string;
}
