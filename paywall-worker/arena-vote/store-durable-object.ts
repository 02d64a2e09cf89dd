// The vote store on Cloudflare: a Durable Object (one instance, named "votes") that serialises every add, written
// against the standard Durable Object storage API. The worker reaches it through `durableObjectVoteStore`.
import type { AddResult, NewVote, StoredVote, VoteStore } from './store.ts';

/** The part of DurableObjectStorage this class uses. */
interface DoStorage {
  get<T>(key: string): Promise<T | undefined>;
  put(entries: Record<string, unknown>): Promise<void>;
  list<T>(options: { prefix: string; start?: string; limit?: number }): Promise<Map<string, T>>;
}
interface DoState {
  storage: DoStorage;
  blockConcurrencyWhile<T>(fn: () => Promise<T>): Promise<T>;
}
/** The part of a Durable Object stub the adapter uses. */
interface DoStub {
  fetch(input: string, init?: RequestInit): Promise<Response>;
}
export interface DoNamespace {
  idFromName(name: string): unknown;
  get(id: unknown): DoStub;
}

const seqKey = (seq: number) => `seq:${String(seq).padStart(12, '0')}`;

export class ArenaVoteStore {
  constructor(private readonly state: DoState) {}

  async fetch(request: Request): Promise<Response> {
    const url = new URL(request.url);
    if (request.method === 'POST' && url.pathname === '/add') {
      const vote = (await request.json()) as NewVote;
      const result = await this.state.blockConcurrencyWhile(() => this.add(vote));
      return Response.json({ result });
    }
    if (request.method === 'GET' && url.pathname === '/since') {
      const after = Number(url.searchParams.get('after') ?? 0);
      const limit = Math.min(1000, Number(url.searchParams.get('limit') ?? 100));
      const rows = await this.state.storage.list<StoredVote>({
        prefix: 'seq:',
        start: seqKey(after + 1),
        limit,
      });
      return Response.json({ votes: [...rows.values()] });
    }
    return new Response('not found', { status: 404 });
  }

  private async add(vote: NewVote): Promise<AddResult> {
    const s = this.state.storage;
    if (await s.get(`sig:${vote.signature}`)) return 'signature_used';
    const voterKey = `voter:${vote.roundId}:${vote.address}`;
    if (await s.get(voterKey)) return 'already_voted';
    const seq = ((await s.get<number>('last_seq')) ?? 0) + 1;
    // One put of several keys is atomic in Durable Object storage.
    await s.put({
      [`sig:${vote.signature}`]: seq,
      [voterKey]: seq,
      last_seq: seq,
      [seqKey(seq)]: { seq, ...vote },
    });
    return 'added';
  }
}

/** The VoteStore interface over a Durable Object namespace binding. */
export const durableObjectVoteStore = (namespace: DoNamespace): VoteStore => {
  const stub = () => namespace.get(namespace.idFromName('votes'));
  return {
    add: async (vote) => {
      const res = await stub().fetch('https://votes/add', { method: 'POST', body: JSON.stringify(vote) });
      return ((await res.json()) as { result: AddResult }).result;
    },
    since: async (after, limit) => {
      const res = await stub().fetch(`https://votes/since?after=${after}&limit=${limit}`);
      return ((await res.json()) as { votes: StoredVote[] }).votes;
    },
  };
};
