/** The kinds of task a soak keeps in flight, each with the exit code it is made to end with. */
export type TaskKind = "short" | "long" | "failing" | "output-heavy" | "term-ignoring" | "escaping";

export interface SoakTask {
  id: string;
  kind: TaskKind;
  spec: { id: string; shell?: string; argv?: string[]; timeoutSeconds?: number };
  /** The code the command exits with when nothing stops it; null for one that never ends by itself. */
  expectedExit: number | null;
}

/** A small deterministic PRNG (mulberry32), so a soak can be replayed from its seed. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const KINDS: TaskKind[] = ["short", "short", "long", "failing", "output-heavy", "term-ignoring", "escaping"];

/** Makes the n-th task of a soak: its command, and the truth to compare its outcome with. */
export function makeTask(n: number, random: () => number, idPrefix: string): SoakTask {
  const kind = KINDS[Math.floor(random() * KINDS.length)];
  const id = `${idPrefix}-${n}`;
  const code = 1 + Math.floor(random() * 100);
  const secs = (lo: number, hi: number) => (lo + random() * (hi - lo)).toFixed(2);
  switch (kind) {
    case "short":
      return { id, kind, spec: { id, shell: `echo start; sleep ${secs(0.05, 0.8)}; echo end; exit ${code}` }, expectedExit: code };
    case "long":
      return { id, kind, spec: { id, shell: `i=0; while [ $i -lt 20 ]; do echo tick $i; i=$((i+1)); sleep ${secs(0.1, 0.4)}; done; exit ${code}` }, expectedExit: code };
    case "failing":
      return { id, kind, spec: { id, argv: ["sh", "-c", `echo failing >&2; exit ${code}`] }, expectedExit: code };
    case "output-heavy":
      return { id, kind, spec: { id, shell: `head -c ${1 + Math.floor(random() * 4)}000000 /dev/zero | tr '\\0' x; exit ${code}` }, expectedExit: code };
    case "term-ignoring":
      return { id, kind, spec: { id, shell: "trap '' TERM; echo stubborn; sleep 3600" }, expectedExit: null };
    case "escaping":
      return { id, kind, spec: { id, shell: `setsid sh -c 'sleep 3600' </dev/null >/dev/null 2>&1 & ( sleep 3600 & ) ; sleep ${secs(0.2, 1.5)}; exit ${code}` }, expectedExit: code };
  }
}
