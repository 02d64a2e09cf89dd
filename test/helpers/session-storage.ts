// A tab's sessionStorage for buyer-page modules run in Node: an in-memory store, gone with vi.unstubAllGlobals().
import { vi } from 'vitest';

export function stubSessionStorage(): void {
  const store = new Map<string, string>();
  vi.stubGlobal('sessionStorage', {
    getItem: (key: string) => store.get(key) ?? null,
    setItem: (key: string, value: string) => void store.set(key, value),
    removeItem: (key: string) => void store.delete(key),
  });
}
