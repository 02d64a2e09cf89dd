// What the page reads from algod before building a payment (GET /v2/transactions/params), without algosdk: the
// price check and the round lookup run before algosdk is loaded (payment-group.ts imports it, on demand).

export interface LedgerParams {
  genesisHash: string;
  genesisId: string;
  lastRound: bigint;
  minFee: bigint;
  /** Fee per byte in microALGO (0 when the network is not congested). */
  feePerByte: bigint;
}

/** The ledger parameters are for another network than Algorand mainnet. */
export class WrongNetworkError extends Error {}

/** Reads algod's /v2/transactions/params answer. */
export function parseAlgodParams(raw: unknown): LedgerParams {
  const r = (raw ?? {}) as Record<string, unknown>;
  const lastRound = r['last-round'];
  const minFee = r['min-fee'];
  const fee = r.fee;
  if (
    typeof r['genesis-hash'] !== 'string' ||
    typeof r['genesis-id'] !== 'string' ||
    typeof lastRound !== 'number' ||
    typeof minFee !== 'number' ||
    typeof fee !== 'number'
  ) {
    throw new Error('The Algorand node sent unreadable transaction parameters.');
  }
  return {
    genesisHash: r['genesis-hash'],
    genesisId: r['genesis-id'],
    lastRound: BigInt(lastRound),
    minFee: BigInt(minFee),
    feePerByte: BigInt(fee),
  };
}
