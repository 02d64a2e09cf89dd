// Writes that run side by side must all have stopped before a failure is acted on: the caller then removes what
// they wrote, and nothing is still writing into it.

/** Like Promise.all, but waits for every promise to settle before throwing the first failure. */
export async function allSettledOrThrow<T>(promises: readonly Promise<T>[]): Promise<T[]> {
  const outcomes = await Promise.allSettled(promises);
  const failure = outcomes.find((outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected');
  if (failure) throw failure.reason;
  return outcomes.map((outcome) => (outcome as PromiseFulfilledResult<T>).value);
}
