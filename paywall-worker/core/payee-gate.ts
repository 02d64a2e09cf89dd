// Whether the operator's own payee can be paid, asked before any of its sales: a payment to an address that has not
// opted in to USDC fails at settlement, after the buyer signed it. One gate for every runtime: `emi paywall` asks it
// at start (and refuses to start), the Worker, which has no start, at its first paid request; `/x402/health` says it.

export interface PayeeGate {
  /** A check has shown the payee can be paid (known without I/O: the 402 fast path needs no promise). */
  readonly ready: boolean;
  /** Why no new sale may be offered, or null: asked again after every problem, never again once it was null. */
  problem(): Promise<string | null>;
}

/** `check` returns the problem in one line (payeeOptInProblem), or null when the payee can receive the asset. */
export function createPayeeGate(check: () => Promise<string | null>): PayeeGate {
  let asked: Promise<string | null> | null = null;
  let ready = false;
  return {
    get ready() {
      return ready;
    },
    async problem() {
      asked ??= check();
      const problem = await asked;
      if (problem === null) ready = true;
      else asked = null;
      return problem;
    },
  };
}
