// The text a voter signs. Plain lines so that a wallet shows the voter exactly what they approve; every field
// that decides the vote is inside the signature: site, asset, prediction, round and a nonce.
import { ARENA_PREDICTIONS, TRACKED_ASSETS, type ArenaPrediction } from '../../schemas/constants.ts';

export const VOTE_MESSAGE_HEADER = 'emi-arena-vote/v1';

export interface VoteMessage {
  site: string;
  asset: string;
  prediction: ArenaPrediction;
  roundId: string;
  nonce: string;
}

const FIELDS = ['site', 'asset', 'prediction', 'round', 'nonce'] as const;
const NONCE = /^[A-Za-z0-9_-]{16,64}$/;

export const formatVoteMessage = (m: VoteMessage): string =>
  [
    VOTE_MESSAGE_HEADER,
    `site:${m.site}`,
    `asset:${m.asset}`,
    `prediction:${m.prediction}`,
    `round:${m.roundId}`,
    `nonce:${m.nonce}`,
  ].join('\n');

/** Parses the exact format above (no extra lines, fields in order); returns a problem sentence otherwise. */
export const parseVoteMessage = (text: string): VoteMessage | string => {
  const lines = text.split('\n');
  if (lines.length !== FIELDS.length + 1 || lines[0] !== VOTE_MESSAGE_HEADER) {
    return `the signed message must be "${VOTE_MESSAGE_HEADER}" followed by ${FIELDS.join(', ')} lines`;
  }
  const values: string[] = [];
  for (const [i, field] of FIELDS.entries()) {
    const line = lines[i + 1]!;
    if (!line.startsWith(`${field}:`))
      return `line ${i + 2} of the signed message must start with "${field}:"`;
    values.push(line.slice(field.length + 1));
  }
  const [site, asset, prediction, roundId, nonce] = values as [string, string, string, string, string];
  if (!(TRACKED_ASSETS as readonly string[]).includes(asset)) return `unknown asset ${JSON.stringify(asset)}`;
  if (!(ARENA_PREDICTIONS as readonly string[]).includes(prediction)) {
    return `prediction must be one of ${ARENA_PREDICTIONS.join(', ')}`;
  }
  if (!NONCE.test(nonce)) return 'nonce must be 16 to 64 characters of A-Z, a-z, 0-9, "-" or "_"';
  return { site, asset, prediction: prediction as ArenaPrediction, roundId, nonce };
};
