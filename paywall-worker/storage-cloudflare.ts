// Paid files at the edge (Cloudflare Workers): an R2 bucket or a KV namespace binding, keyed by the file name.
// Only the methods used are typed here, so the worker needs no Cloudflare type package.
import type { PaidFileStorage } from './storage.ts';

export interface R2BucketLike {
  get(key: string): Promise<{ text(): Promise<string> } | null>;
  head(key: string): Promise<{ etag: string } | null>;
}

export interface KvNamespaceLike {
  get(key: string, type: 'text'): Promise<string | null>;
}

export function createR2Storage(bucket: R2BucketLike, prefix = ''): PaidFileStorage {
  return {
    async read(file) {
      const object = await bucket.get(prefix + file);
      return object ? object.text() : null;
    },
    // The object's etag changes with every upload: an unpaid request costs a HEAD, not a download and a parse.
    version: async (file) => (await bucket.head(prefix + file))?.etag ?? null,
  };
}

export function createKvStorage(namespace: KvNamespaceLike, prefix = ''): PaidFileStorage {
  return { read: (file) => namespace.get(prefix + file, 'text') };
}
