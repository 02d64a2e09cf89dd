// Every published text says when a history day file is final by the rule the store keeps (generator/history/
// store.ts): once a later day has a file. A run whose as-of is just before midnight, or a backfill after a restart,
// still appends to a day whose UTC day is over, so "final once the day is over" told clients to keep an incomplete
// day for long.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildIndex } from '../generator/history/index.ts';
import { historyLlmsLines } from '../generator/discovery/history-entries.ts';
import { FIELD_MEANINGS } from '../schemas/field-meanings.ts';

const RULE = /final once a later day has a file/;
const PROMISE_TOO_EARLY = /final once (its UTC day|the day) is over/i;

describe('the rule of a final history day, as published', () => {
  let dir: string | undefined;
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('is the store’s rule in index.json, the field meaning of `date` and llms.txt', async () => {
    dir = await mkdtemp(join(tmpdir(), 'emi-history-final-'));
    const index = await buildIndex(dir, 30, Date.parse('2026-11-26T12:00:00Z'));
    const texts = {
      'index.json cache_note': index.cache_note,
      'field meaning of date': FIELD_MEANINGS.date ?? '',
      'llms.txt': historyLlmsLines((path) => path),
    };
    for (const [where, text] of Object.entries(texts)) {
      expect(text, where).toMatch(RULE);
      expect(text, where).not.toMatch(PROMISE_TOO_EARLY);
    }
  });
});
