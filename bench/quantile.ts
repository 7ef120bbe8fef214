/** The q-quantile (0..1) of a set of timings, taken from the sorted values (no interpolation). */
export function quantile(xs: readonly number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor((s.length - 1) * q)];
}

/** The median of a set of timings: what every benchmark here reports. */
export function median(xs: readonly number[]): number {
  return quantile(xs, 0.5);
}
