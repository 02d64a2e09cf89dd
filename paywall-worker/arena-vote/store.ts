// Where accepted votes are kept until the generator imports them. One vote per address per round and one use
// per signature are enforced by the store itself, so two requests racing each other cannot both get in.

export interface StoredVote {
  seq: number; // export cursor: increasing in acceptance order
  address: string;
  asset: string;
  prediction: string;
  roundId: string;
  nonce: string;
  /** Server clock, ms: the time the round rules are applied to. */
  receivedAt: number;
  form: 'data' | 'transaction';
  /** Base64 of the signature: the replay key, kept so that the vote can be checked again later. */
  signature: string;
}

export type NewVote = Omit<StoredVote, 'seq'>;

export type AddResult = 'added' | 'already_voted' | 'signature_used';

export interface VoteStore {
  add(vote: NewVote): Promise<AddResult>;
  /** Votes with seq > after, oldest first, at most `limit`. */
  since(after: number, limit: number): Promise<StoredVote[]>;
}
