// The track-record page below the minimum sample: with 1-9 rounds it says how many there are and that rates are
// withheld below MIN_SAMPLE rounds, rather than "cannot be compared yet: no round ... has both" (false: one has) and
// bare "n/a" cells (README: every metric is withheld (null) below 10 rounds).
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { MIN_SAMPLE } from '../generator/engines/arena/metrics.ts';
import { agreementSentence } from '../generator/site/track-record.ts';
import { MINUTE } from './arena-fixtures.ts';
import { expectOk as ok, generateArgs, runEmi, voteAndOpenRound } from './ops-cli.ts';
import { clockAt } from './helpers/fake-clock.ts';

/**
 * Every process reads its clock at mid-morning UTC: the round open to votes then ends the same UTC day, so the run
 * after it writes today's history (late in the UTC day the round ends tomorrow, a day the history refuses to open
 * before the wall clock reaches it, and the page had no statistics to read).
 */
const MORNING = (): Record<string, string> => clockAt('2026-06-10T10:00:00Z');

let dir: string | undefined;
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** The text of the page, tags dropped, the entities it uses read and spaces folded. */
const text = (html: string): string =>
  html
    .replace(/<[^>]+>/g, ' ')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&')
    .replace(/\s+/g, ' ')
    .trim();

describe('emi build after one round with a brain call and a crowd consensus', () => {
  it('says there is only 1 round so far and that rates are withheld below the minimum', async () => {
    dir = await mkdtemp(join(tmpdir(), 'emi-track-record-'));
    const clock = MORNING();
    const round = await voteAndOpenRound(dir, 'BTC', clock);
    ok(await runEmi(dir, generateArgs(new Date(round.end + MINUTE).toISOString()), clock));
    ok(
      await runEmi(dir, [
        'build',
        '--published',
        'site',
        '--out',
        'dist',
        '--base-url',
        'http://127.0.0.1:9/',
      ]),
    );
    const page = text(await readFile(join(dir, 'dist/docs/track-record/index.html'), 'utf8'));
    // Before: "Brain and crowd cannot be compared yet: no round in the scoring window has both ..."
    expect(page).not.toContain('cannot be compared yet');
    expect(page).toContain(
      'Brain and crowd both made a call in only 1 round so far; the agreement rate is withheld below ' +
        `${MIN_SAMPLE} rounds.`,
    );
    // Before: "Main brain 1 n/a n/a n/a".
    for (const who of ['Main brain', 'Crowd consensus']) {
      expect(page).toContain(
        `${who} 1 withheld (n < ${MIN_SAMPLE}) withheld (n < ${MIN_SAMPLE}) withheld (n < ${MIN_SAMPLE})`,
      );
    }
  }, 60_000);
});

describe('the agreement sentence', () => {
  it('tells "none yet" from "too few", and shows a rate once there is one', () => {
    expect(agreementSentence(null, 0)).toMatch(/^Brain and crowd cannot be compared yet: no round/);
    expect(agreementSentence(null, 3)).toBe(
      'Brain and crowd both made a call in only 3 rounds so far; the agreement rate is withheld below ' +
        `${MIN_SAMPLE} rounds.`,
    );
    expect(agreementSentence(0.7, 10)).toBe('Brain and crowd agreed in 70.0 % of 10 rounds.');
  });
});
