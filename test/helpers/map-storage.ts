// A Durable Object's `ctx.storage` in a Map, for the payment book's Durable Object home run in Node (the real
// Durable Object runs in test/host-cloudflare.test.ts).
import type { BookStorage } from '../../paywall-worker/cloudflare/storage-payment-book.ts';

/** `ctx.storage` as a Durable Object has it, in a Map; `alarm` is the time its one alarm is set for. */
export function mapStorage(): BookStorage & { map: Map<string, unknown>; alarm: number | null } {
  const map = new Map<string, unknown>();
  const storage = {
    map,
    alarm: null as number | null,
    get: <T>(key: string) => Promise.resolve(map.get(key) as T | undefined),
    put: <T>(key: string, value: T) => Promise.resolve(void map.set(key, structuredClone(value))),
    delete: ((keys: string | string[]) => {
      if (typeof keys === 'string') return Promise.resolve(map.delete(keys));
      // The real storage refuses more than 128 keys in one delete: a book that asks for more fails here too.
      if (keys.length > 128) throw new Error('more than 128 keys in one delete');
      return Promise.resolve(keys.filter((key) => map.delete(key)).length);
    }) as BookStorage['delete'],
    list: <T>() => Promise.resolve(new Map(map) as Map<string, T>),
    getAlarm: () => Promise.resolve(storage.alarm),
    setAlarm: (time: number) => Promise.resolve(void (storage.alarm = time)),
  };
  return storage;
}
