/** True while any process, a zombie too, is in group `pgid` (what kill(-pgid, 0) answers). */
export function groupHasAnyMember(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== "ESRCH";
  }
}
