// Independent set-up steps started together: waits for every one to finish (so that an afterAll can clean up all
// that did start), then throws the first failure, as steps run one after another would have.
export async function settleAll(steps: readonly Promise<unknown>[]): Promise<void> {
  const results = await Promise.allSettled(steps);
  const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
}
