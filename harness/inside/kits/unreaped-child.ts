/**
 * A line of `sh` that leaves the process it runs in with a child it will
 * never reap, once the shell execs into a program that does not reap
 * children it did not start: write `${UNREAPED_CHILD}\nexec program …`.
 *
 * The child is a subshell that ends only once its parent no longer runs
 * `sh`, i.e. after the exec. A child that may end before the exec (`true &`,
 * `sleep 0 &`) is sometimes reaped by the shell itself: measured 20 and 2
 * times in 200 on this machine, which made the tests that wait for the
 * zombie flaky. No single quote inside, so it fits in `sh -c '…'`.
 */
export const UNREAPED_CHILD = '(while [ "$(cat /proc/$$/comm)" = sh ]; do sleep 0.01; done) &';
