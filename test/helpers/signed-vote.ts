// A wallet-signed arena vote as POST /arena/vote takes it, built the way the arena page's throwaway key does: the
// product's own vote text (formatVoteMessage), signed as data by an Algorand account (algosdk.signBytes, "MX"
// prefix), the signature in base64. Tests that need a forged, tampered or transaction-form vote build it from these.
import algosdk from 'algosdk';
import { votingRoundFor } from '../../generator/engines/arena/rules.ts';
import { roundAt, roundByIndex, type Round } from '../../generator/engines/arena/rounds.ts';
import { formatVoteMessage } from '../../paywall-worker/arena-vote/message.ts';
import { TRACKED_ASSETS, type ArenaPrediction } from '../../schemas/constants.ts';
import type { VoteBody } from '../../site/arena-vote/src/vote-wallets.ts';

/** The "data" form of the vote body (the form Pera and the local-stack key send). */
export type DataVoteBody = Extract<VoteBody, { form: 'data' }>;

/** The first tracked asset's round that takes votes at `now` (for apps that run on the real clock). */
export const openVotingRound = (now = Date.now()): Round =>
  TRACKED_ASSETS.map((asset) => votingRoundFor(asset, now)).find((round) => round !== null)!;

/** The round after the one running at `now`: open to votes for the whole of the current round. */
export const nextRound = (now = Date.now()): Round => roundByIndex(roundAt(now).index + 1);

export interface VoteText {
  /** The site's origin the voter signs for. */
  site: string;
  round: Pick<Round, 'id' | 'asset'>;
  prediction?: ArenaPrediction;
}

/** The text a voter signs, in the product's format: BULLISH unless told otherwise, a fresh nonce each time. */
export const voteMessage = ({ site, round, prediction = 'BULLISH' }: VoteText): string =>
  formatVoteMessage({ site, asset: round.asset, prediction, roundId: round.id, nonce: crypto.randomUUID() });

/** `message` (any text, well-formed or not) signed as data by `account`: the body POST /arena/vote takes. */
export const signedDataVote = (account: algosdk.Account, message: string): DataVoteBody => ({
  form: 'data',
  address: account.addr.toString(),
  message,
  signature: algosdk.bytesToBase64(algosdk.signBytes(new TextEncoder().encode(message), account.sk)),
});

export interface SignedVoteOptions extends Omit<VoteText, 'round'> {
  /** The round open to votes at `now` (openVotingRound) unless given. */
  round?: Pick<Round, 'id' | 'asset'>;
  /** A fresh wallet unless given; pass one to vote twice as the same voter. */
  account?: algosdk.Account;
  /** The clock that picks the default round. */
  now?: number;
}

/** A vote for `site` signed by a wallet: the JSON body of POST /arena/vote (stringify it to send it). */
export const signedVoteBody = ({
  round,
  account = algosdk.generateAccount(),
  now,
  ...text
}: SignedVoteOptions): DataVoteBody =>
  signedDataVote(account, voteMessage({ ...text, round: round ?? openVotingRound(now) }));
