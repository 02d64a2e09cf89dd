// Finds out whether a payment transaction landed when the facilitator's answer was lost: the Algorand indexer API
// (`GET /v2/transactions/{txid}` and `GET /health`), which public indexers and the development facilitator answer.
export type ChainStatus =
  /** `time`: when its block was made (the indexer's `round-time`, in ms). */
  | { confirmed: true; round: number; time: number }
  | { confirmed: false; currentRound: number }
  | { confirmed: null; cause: string };

export interface ChainLookup {
  status(txid: string): Promise<ChainStatus>;
}

export function createIndexerLookup(indexerUrl: string, timeoutMs = 5000): ChainLookup {
  const base = indexerUrl.replace(/\/+$/, '');
  const getJson = async (path: string): Promise<{ status: number; json: Record<string, unknown> }> => {
    const response = await fetch(`${base}${path}`, { signal: AbortSignal.timeout(timeoutMs) });
    const json = (await response.json().catch(() => ({}))) as Record<string, unknown>;
    return { status: response.status, json };
  };
  return {
    async status(txid) {
      try {
        const found = await getJson(`/v2/transactions/${encodeURIComponent(txid)}`);
        const transaction = found.json.transaction as Record<string, unknown> | undefined;
        const round = transaction?.['confirmed-round'];
        const roundTime = transaction?.['round-time'];
        if (found.status === 200 && typeof round === 'number' && round > 0) {
          // Without its time, a confirmation cannot be told apart from an old payment presented again.
          if (typeof roundTime !== 'number') return { confirmed: null, cause: 'indexer gave no round-time' };
          return { confirmed: true, round, time: roundTime * 1000 };
        }
        if (found.status !== 200 && found.status !== 404) {
          return { confirmed: null, cause: `indexer answered ${found.status}` };
        }
        const health = await getJson('/health');
        const current = health.json.round;
        if (typeof current !== 'number') return { confirmed: null, cause: 'indexer /health gave no round' };
        return { confirmed: false, currentRound: current };
      } catch (error) {
        return { confirmed: null, cause: error instanceof Error ? error.message : String(error) };
      }
    },
  };
}
