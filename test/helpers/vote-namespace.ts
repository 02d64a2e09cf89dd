// An in-memory stand-in for the Durable Object storage behind the ARENA_VOTES namespace: the real ArenaVoteStore over
// a Map, reached through the namespace the Cloudflare site worker asks (for tests that run the worker in Node).
import { ArenaVoteStore, type DoNamespace } from '../../paywall-worker/arena-vote/store-durable-object.ts';

export function voteNamespace(): DoNamespace {
  const data = new Map<string, unknown>();
  const object = new ArenaVoteStore({
    storage: {
      get: async <T>(key: string) => data.get(key) as T | undefined,
      put: async (entries: Record<string, unknown>) => {
        for (const [key, value] of Object.entries(entries)) data.set(key, structuredClone(value));
      },
      list: async <T>(o: { prefix: string; start?: string; limit?: number }) =>
        new Map(
          [...data.entries()]
            .filter(([key]) => key.startsWith(o.prefix) && (o.start === undefined || key >= o.start))
            .sort(([a], [b]) => (a < b ? -1 : 1))
            .slice(0, o.limit ?? Infinity) as Array<[string, T]>,
        ),
    },
    blockConcurrencyWhile: (fn) => fn(),
  });
  return {
    idFromName: (name) => name,
    get: () => ({ fetch: (input, init) => object.fetch(new Request(input, init)) }),
  };
}
