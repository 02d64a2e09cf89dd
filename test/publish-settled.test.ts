// Writes run side by side: a failure is reported only once every other write has stopped, so the caller's clean-up
// never races a write still in flight.
import { describe, expect, it } from 'vitest';
import { allSettledOrThrow } from '../generator/publish/settled.ts';

const after = <T>(ms: number, value: T, fail = false): Promise<T> =>
  new Promise((resolve, reject) =>
    setTimeout(() => (fail ? reject(new Error(String(value))) : resolve(value)), ms),
  );

describe('allSettledOrThrow', () => {
  it('returns every value in order when all succeed', async () => {
    expect(await allSettledOrThrow([after(20, 'a'), after(1, 'b'), Promise.resolve('c')])).toEqual([
      'a',
      'b',
      'c',
    ]);
  });

  it('throws the first failure only after the slower writes have finished', async () => {
    let slowDone = false;
    const slow = after(40, 'slow').then((value) => {
      slowDone = true;
      return value;
    });
    const outcome = allSettledOrThrow([after(1, 'disk full', true), slow, after(5, 'second failure', true)]);
    await expect(outcome).rejects.toThrow('disk full');
    expect(slowDone).toBe(true);
  });
});
