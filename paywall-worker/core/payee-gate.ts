// Whether the operator's own payee can be paid, asked before any of its sales: a payment to an address that has not
// opted in to USDC fails at settlement, after the buyer signed it. One gate for every runtime: `emi paywall` asks it
// at start (and refuses to start), the Worker, which has no start, at its first paid request; `/x402/health` says it.
import type { OptInProblem } from '../opt-in.ts';

export interface PayeeGate {
  /** A check has shown the payee can be paid (known without I/O: the 402 fast path needs no promise). */
  readonly ready: boolean;
  /**
   * Why no new sale may be offered, in words anyone may read (no algod URL), or null: asked again after every
   * problem, never again once it was null.
   */
  problem(): Promise<string | null>;
  /** The same question, with the operator's detail (which algod was asked): for a refused start. */
  check(): Promise<OptInProblem | null>;
}

/** A problem given in one line: the same words for anyone and for the operator. */
const asProblem = (problem: OptInProblem | string | null): OptInProblem | null =>
  typeof problem === 'string' ? { message: problem, detail: problem } : problem;

/**
 * `check` returns the problem (payeeOptInProblem; or one line for both), or null when the payee can receive the
 * asset. `log` gets the operator's detail of each problem found, which the public answers leave out.
 */
export function createPayeeGate(
  check: () => Promise<OptInProblem | string | null>,
  log?: (detail: string) => void,
): PayeeGate {
  let asked: Promise<OptInProblem | null> | null = null;
  let ready = false;
  const gate: PayeeGate = {
    get ready() {
      return ready;
    },
    async check() {
      const first = asked === null;
      asked ??= check().then(asProblem);
      const problem = await asked;
      if (problem === null) ready = true;
      else {
        asked = null;
        if (first) log?.(problem.detail); // once per question, however many requests wait on it
      }
      return problem;
    },
    async problem() {
      return (await gate.check())?.message ?? null;
    },
  };
  return gate;
}
