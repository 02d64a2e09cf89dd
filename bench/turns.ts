// Measures whose ratio is compared are taken in pairs, back to back: this machine's speed drifts by a third within a
// minute, so only samples that met the same moments make a ratio. Within a pair the two take turns at going first,
// so that neither always runs on a cache or a heap the other has just warmed.

/** Runs `a` and `b` back to back, `b` first on odd turns; returns their results as [a, b]. */
export async function inTurns<A, B>(
  turn: number,
  a: () => A | Promise<A>,
  b: () => B | Promise<B>,
): Promise<[A, B]> {
  if (turn % 2 === 0) {
    const first = await a();
    return [first, await b()];
  }
  const first = await b();
  return [await a(), first];
}
