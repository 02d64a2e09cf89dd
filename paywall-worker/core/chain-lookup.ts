// Finds out whether a payment transaction landed when the facilitator's answer was lost: the Algorand indexer API
// (`GET /v2/transactions/{txid}` and `GET /health`), which public indexers and the development facilitator answer.
export type ChainStatus =
  /** Confirmed in `round`, as the indexer says while it has reached `currentRound` (the age of the confirmation). */
  | { confirmed: true; round: number; currentRound: number }
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
  /** The round the indexer has reached: its answer's `current-round`, else its /health. */
  const currentRound = async (answer: Record<string, unknown>): Promise<number | null> => {
    if (typeof answer['current-round'] === 'number') return answer['current-round'];
    const health = await getJson('/health');
    return typeof health.json.round === 'number' ? health.json.round : null;
  };
  return {
    async status(txid) {
      try {
        const found = await getJson(`/v2/transactions/${encodeURIComponent(txid)}`);
        if (found.status !== 200 && found.status !== 404) {
          return { confirmed: null, cause: `indexer answered ${found.status}` };
        }
        const current = await currentRound(found.json);
        if (current === null) return { confirmed: null, cause: 'indexer gave no current round' };
        const transaction = found.json.transaction as Record<string, unknown> | undefined;
        const round = transaction?.['confirmed-round'];
        if (found.status === 200 && typeof round === 'number' && round > 0) {
          return { confirmed: true, round, currentRound: current };
        }
        return { confirmed: false, currentRound: current };
      } catch (error) {
        return { confirmed: null, cause: error instanceof Error ? error.message : String(error) };
      }
    },
  };
}
