// The arena page in chromium on a phone-sized screen, served by the local stack (`emi serve`'s composition) on
// 127.0.0.1: a visitor connects a wallet (the local stack's throwaway key: Pera and Defly need their phone apps),
// votes for the asset's next round, sees the vote in "your votes", and the next generator run imports it as a
// human vote. The wallet code is fetched only on the first click. "Your votes" scores the votes this browser kept
// against the latest lessons the page reads, and says truthfully why the others are not scored.
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LATEST_LESSONS } from '../generator/engines/arena/bodies.ts';
import { roundAt, roundByIndex } from '../generator/engines/arena/rounds.ts';
import type { LocalStack } from '../generator/local-stack.ts';
import { allVotesTally } from '../generator/state/repo.ts';
import { openArenaStore } from '../generator/state/store.ts';
import { hasChromium, launchChromium } from './buyer-stack.ts';
import { startEmiUpSite, type EmiUpSite } from './helpers/emi-up-site.ts';

describe.skipIf(!hasChromium)('arena page: connect a wallet and vote', () => {
  let site: EmiUpSite;
  let stack: LocalStack;
  let browser: Browser;
  const dirs = { site: '', paid: '', state: '', dist: '' };
  const generate = () => site.generate();

  beforeAll(async () => {
    // The page signs for the site it was built for; the vote endpoint takes votes for its own origin.
    site = await startEmiUpSite('emi-arena-page-', {
      stack: ({ state }) => ({ voteStorePath: join(state, 'arena-votes.sqlite') }),
    });
    ({ stack } = site);
    Object.assign(dirs, site.dirs);
    browser = await launchChromium();
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await site?.close();
  });

  it('a vote signed in the page is accepted, listed, refused a second time, and imported by the next run', async () => {
    const page = await browser.newPage({ viewport: { width: 390, height: 844 } });
    const scriptBytes: Promise<number>[] = [];
    page.on('response', (r) => {
      if (r.request().resourceType() === 'script') scriptBytes.push(r.body().then((b) => b.length));
    });
    const loaded = async () => (await Promise.all(scriptBytes)).reduce((a, b) => a + b, 0);
    await page.goto(`${stack.url}/docs/arena-rules/`);
    await expect.poll(() => page.textContent('#arena-message')).toContain('asset:BTC');
    // A few kilobytes before a click; algosdk and the wallet SDKs (hundreds of kilobytes) only after one.
    expect(await loaded()).toBeLessThan(16_384);
    expect(await page.isDisabled('#arena-sign')).toBe(true);

    await page.click('#arena-connect-local');
    await expect
      .poll(() => page.textContent('#arena-wallet'))
      .toMatch(/^Connected: Throwaway key.*, [A-Z2-7]{58}$/);
    expect(await loaded()).toBeGreaterThan(100_000);
    await page.selectOption('#arena-asset', 'ETH');
    await page.selectOption('#arena-prediction', 'BEARISH');
    const text = (await page.textContent('#arena-message')) ?? '';
    expect(text).toMatch(
      /^emi-arena-vote\/v1\nsite:http:\/\/127\.0\.0\.1:\d+\nasset:ETH\nprediction:BEARISH\nround:ETH-\d{8}T\d\dZ\nnonce:/,
    );
    const round = /round:(\S+)/.exec(text)![1]!;

    await page.click('#arena-sign');
    await expect.poll(() => page.textContent('#arena-result')).toContain(`Vote received for ${round}`);
    // The page shows the answer, then fetches "your votes" again.
    await expect.poll(() => page.textContent('#arena-history tbody')).toContain(`${round}BEARISH`);

    // A second vote by the same wallet in the same round is refused by the endpoint, and said so.
    await page.click('#arena-sign');
    await expect.poll(() => page.textContent('#arena-result')).toMatch(/^Refused \(already_voted\)/);

    // The page has no horizontal overflow at phone width with the form filled in.
    const width = await page.evaluate(() => document.documentElement.scrollWidth);
    expect(width).toBeLessThanOrEqual(390);

    await generate();
    const store = openArenaStore(join(dirs.state, 'arena.sqlite'));
    try {
      expect(allVotesTally(store.db).human).toBe(1);
    } finally {
      store.close();
    }
    await page.close();
  });

  it('scores the kept votes found in the latest lessons, and says why the others are not scored', async () => {
    const now = roundAt(Date.now());
    const past = (hours: number) => roundByIndex(now.index - hours).id;
    const [right, wrong, old, open] = [past(2), past(3), past(40), roundByIndex(now.index + 1).id];
    const kept = [
      { address: 'A', round: right, prediction: 'BULLISH' },
      { address: 'A', round: wrong, prediction: 'BEARISH' },
      { address: 'A', round: old, prediction: 'NEUTRAL' },
      { address: 'A', round: open, prediction: 'BULLISH' },
    ];
    const page = await browser.newPage({ viewport: { width: 390, height: 844 } });
    await page.addInitScript((votes) => localStorage.setItem('emi-arena-votes', votes), JSON.stringify(kept));
    // The lessons the page reads: two of the kept votes' rounds among them (the old round is past the latest ones).
    const lessons = [
      { round_id: right, actual_outcome: 'BULLISH' },
      { round_id: wrong, actual_outcome: 'NEUTRAL' },
    ];
    await page.route('**/api/teacher-lessons.php', (route) =>
      route.fulfill({ contentType: 'application/json', body: JSON.stringify({ latest_lessons: lessons }) }),
    );
    await page.goto(`${stack.url}/docs/arena-rules/`);
    await expect
      .poll(() => page.textContent('#arena-score'))
      .toBe(`1 of 2 resolved votes right (scored from the latest ${LATEST_LESSONS} published lessons only).`);
    const rows = await page.$$eval('#arena-history tbody tr', (trs) =>
      trs.map((tr) => Array.from(tr.querySelectorAll('td'), (td) => td.textContent)),
    );
    expect(rows).toEqual([
      [right, 'BULLISH', 'BULLISH', 'yes'],
      [wrong, 'BEARISH', 'NEUTRAL', 'no'],
      [
        old,
        'NEUTRAL',
        `not among the latest ${LATEST_LESSONS} lessons: resolved or not, it is outside what this page reads`,
        '',
      ],
      [open, 'BULLISH', 'round not over yet', ''],
    ]);

    // None of them among the lessons: nothing is scored, and the line does not promise that it will be.
    lessons.length = 0;
    await page.reload();
    await expect
      .poll(() => page.textContent('#arena-score'))
      .toBe(
        `None of your votes is among the latest ${LATEST_LESSONS} published lessons, the only ones this page scores.`,
      );
    await page.close();
  }, 60_000);
});
