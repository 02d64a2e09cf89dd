// A client that hung up before its request body arrived: no fault of the server's, and nobody is left to read an
// answer. Shared by the paywall app and `emi serve`'s preview app, without loading either.

/**
 * Node's request stream fails with `aborted` (ECONNRESET) when the client goes away mid-body. Upstream failures read
 * otherwise (`socket hang up`, `read ECONNRESET`, fetch's `fetch failed`) and stay errors.
 */
export function isClientAbort(error: unknown): boolean {
  return (
    error instanceof Error &&
    error.message === 'aborted' &&
    (error as { code?: unknown }).code === 'ECONNRESET'
  );
}
